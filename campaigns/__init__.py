"""Bundled campaigns (data files), installed as `lsrep.campaigns`."""
