"""The page's sections, one module each, as gradio's ``demo/native_plots`` composes its tabs.

Each module holds its components (``build(c)``), its events (``wire(c)``) and the handlers only it
uses; :mod:`vit.ui.layout` composes them, :mod:`vit.ui.events` has the handlers several share, and
:mod:`vit.ui.tabs.parts` the pieces every tab is made of (a picture with its buttons, the pinned copy).

* :mod:`~vit.ui.tabs.controls`: the sidebar (image, model, P, depth, Analyze, meter, top-k) and the
  view controls above the tabs (layer, head, opacity, colormap), with the API's events;
* :mod:`~vit.ui.tabs.picture_tabs` (Patches & shapes, Attention, Across depth, Figure 7) and
  :mod:`~vit.ui.tabs.inside`: the pictures of an analysis;
* :mod:`~vit.ui.tabs.why`: "Why this class?", its explanations and their test;
* :mod:`~vit.ui.tabs.lesson`: the guided walk through 11.4.1 → 11.4.7.
"""
