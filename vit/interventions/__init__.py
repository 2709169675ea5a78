"""What if? The model with patches taken away and heads switched off (:func:`intervene`, :func:`head_importance`).

``forward`` holds the math (a block with heads off, the encoder on a subset of tokens), ``run`` the API.
"""
