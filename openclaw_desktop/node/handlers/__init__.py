"""One module per command area; each handler returns an InvokeResult."""
