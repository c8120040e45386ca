"""Deleted at merge: the old name of :mod:`bayesldp._io`, kept while other areas import it.

Every name here is :mod:`bayesldp._io`'s; import from there.
"""

from bayesldp._io import atomic_open, markdown_table, write_csv, write_json

__all__ = ["atomic_open", "markdown_table", "write_csv", "write_json"]
