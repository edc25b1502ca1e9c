import sys

from minifier.cli import main

sys.exit(main())
