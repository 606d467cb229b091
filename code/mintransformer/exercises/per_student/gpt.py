"""Chapter 12, GPT: per-student numbers."""

from mintransformer.exercises.per_student import exercise

# GPT-2's four released sizes: (name, layers, d_model, parameters). The counts are those of eq-gpt-params
# with GPT-2's vocabulary (50,257), context (1,024) and d_ff = 4 d_model, the output layer tied to the
# embedding: the chapter computes them, and tests/test_exercises_12_gpt.py counts them on the package's MinGPT.
GPT2_SIZES = (
    ("GPT-2 small", 12, 768, 124_439_808),
    ("GPT-2 medium", 24, 1024, 354_823_168),
    ("GPT-2 large", 36, 1280, 774_030_080),
    ("GPT-2 extra-large", 48, 1600, 1_557_611_200),
)


@exercise("ex-gpt-cache-memory", book={"model": "GPT-2 small", "num_layers": 12, "d_model": 768,
                                      "parameters": 124_439_808, "length": 1024})
def _(draw):
    # One of GPT-2's sizes, and sequences of a length up to its context of 1,024 tokens, a multiple of 64 from 128.
    model, num_layers, d_model, parameters = draw.choice(GPT2_SIZES)
    return {"model": model, "num_layers": num_layers, "d_model": d_model, "parameters": parameters,
            "length": 64 * draw.integer(2, 16)}
