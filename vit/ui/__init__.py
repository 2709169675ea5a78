"""The page of the app (gradio): docs/layout.md names its modules."""
