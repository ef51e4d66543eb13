"""What an extension module is: defined once, in the load model (:mod:`wheelaudit.load.entries`);
re-exported here for the checks and reviews that ask."""

from __future__ import annotations

from wheelaudit.load import is_extension_module, loaded_binaries

__all__ = ["is_extension_module", "loaded_binaries"]
