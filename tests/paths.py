"""Where the tests find the repository and its test data, wherever a test module sits in the tree."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = ROOT / "tests" / "data"  # copied from the real sources; see data/README.md
