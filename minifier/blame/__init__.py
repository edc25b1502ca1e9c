"""Which part of the compiler a minimal repro needs to fail (decomposition, pass, lowering,
fusion, codegen path, config flag); its findings in words are minifier.report.blame.
May import: workers
"""
