"""One image through the model, seen from inside: the traced run (``run``: ``analyze``), the tracer
(``trace``), rollout and the other maps computed from attention (``rollout``), the record an analysis
returns (``record``: ``Analysis``) and the ViT paper's Figure 7 weight maps (``figure7``).
"""
