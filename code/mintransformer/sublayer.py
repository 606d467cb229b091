"""The residual connection around every sub-layer, shared by the encoder's and the decoder's layers."""


def residual(x, sublayer, norm, dropout, norm_first, training=False):
    """Run one sub-layer inside its residual connection (paper sections 3.1 and 5.4).

    Post-norm (the paper): x' = LayerNorm(x + Dropout(Sublayer(x))).
    Pre-norm:              x' = x + Dropout(Sublayer(LayerNorm(x))).

    The one place where the two orders differ: every sub-layer of the encoder and decoder
    layers goes through it. ``sublayer`` maps its input (B, T, D) to ``(y, extra)``, its output
    and whatever else it computed (attention weights, keys and values), returned with x'.
    """
    y, extra = sublayer(norm(x) if norm_first else x)
    y = dropout(y, training=training)
    return (x + y if norm_first else norm(x + y)), extra
