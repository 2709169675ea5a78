"""Why this class? The maps (``maps``: ``explain``), the methods' registry (``methods``, torch-free), AttnLRP's
rules (``lrp``), occlusion, and the test of a map by perturbation (``perturb``: deletion and insertion curves).
"""
