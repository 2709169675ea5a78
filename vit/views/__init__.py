"""The pictures of one analysis, gradio-free: an analysis in, a ``View`` out, the same for the page, the CLI and the
benchmark. ``registry`` lists them; one module per tab over ``base``; ``draw`` and ``plots`` the primitives."""
