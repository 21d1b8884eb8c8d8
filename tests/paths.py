"""Where the tests' own files are, from any test under tests/."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures"
ROOT = TESTS.parent
