"""The page of the app (gradio): see app.py for its modules."""
