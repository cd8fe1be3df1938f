"""python -m inference_math.cli"""

import sys

from . import main

sys.exit(main())
