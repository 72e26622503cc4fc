"""Every test directory can import the shared helpers of tests/ (records.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
