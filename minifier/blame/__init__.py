"""Which part of the compiler a minimal repro needs to fail (decomposition, pass, lowering,
fusion, codegen path, config flag). May import compiler/, repro/ and minifier.workers."""
