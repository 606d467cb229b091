"""Show the package's own code inside a chapter, so the book never keeps a second copy."""

import inspect


def show_source(obj, only=None):
    """Print the source of a package function, class or method.

    Args:
        obj: what to show, e.g. ``mintransformer.scaled_dot_product_attention``.
        only: optional method name; show just that method of a class.
    """
    if only is not None:
        obj = getattr(obj, only)
    print(inspect.getsource(obj).rstrip())
