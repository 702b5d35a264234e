"""CLI command modules; each defines register(subparsers, command)."""
