"""The reference app's delivery pipeline (``stacks.pipeline``), written on the library ``hyperpod_gov``."""
