"""What a server shared by a whole network needs beyond the model, without gradio: the upload gate and
picture folder (``files``), the fair queue (``queue``), memory trim (``memory``), the model and analysis
caches (``cache``) and the background download (``prefetch``)."""
