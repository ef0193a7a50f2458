"""ctxscope's tests: unit/ (one module of core at a time), functional/ (the command line, files and
HTTP), tui/ (the Textual app, with its SVG snapshots), and support/ (the builders they share)."""
