"""The page's sections, one module each (``build(c)``, ``wire(c)``), as in gradio's ``demo/native_plots``."""
