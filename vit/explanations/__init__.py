"""Why this class? The maps (``maps``: ``explain``), the methods' registry (``methods``, torch-free),
the test of a map by perturbation (``perturb``: deletion and insertion curves) and the ground truth on
drawn shapes (``faithfulness``).
"""
