"""Small helpers shared by the layers."""


def build_once(layer, *shapes):
    """Build a sub-layer unless it is built already (e.g. called on its own first)."""
    if not layer.built:
        layer.build(*shapes)
