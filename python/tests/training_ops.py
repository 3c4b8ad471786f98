"""The training ops of the table, tested in test_ops_training.py (test_ops.py's coverage
test counts them; kept apart so that test_ops.py does not need torch)."""
# Every training op of the table (test_ops.py's coverage test counts these as tested here).
UNARY_BACKWARD_OPS = ["gelu_backward", "gelu_tanh_backward", "silu_backward", "relu_backward", "sigmoid_backward",
                      "tanh_backward", "exp_backward"]
TRAINING = set(UNARY_BACKWARD_OPS) | {
    "softmax_backward", "log_softmax_backward", "layernorm_backward", "rmsnorm_backward", "swiglu_backward",
    "cross_entropy", "embedding_backward", "adamw_step", "global_norm", "rope_backward", "attention_backward"}

