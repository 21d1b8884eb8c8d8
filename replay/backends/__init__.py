"""Environments: where an instance's repository lives and its commands run."""
