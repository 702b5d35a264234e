"""Protocol records and native-file loaders."""
