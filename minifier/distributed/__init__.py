"""A torchrun job under minify (`minify [options] torchrun ...`): torchrun's command line read and
passed through, the job's ranks started under the capture and ended, which rank failed and which
waited on it (docs/distributed.md).

May import: workers
"""
