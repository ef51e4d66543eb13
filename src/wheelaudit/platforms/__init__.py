"""Platforms: the one platform-tag model and the policy data (platforms/data/, each file with
the script under scripts/regen_*.py that regenerates it)."""
