// Level 1 problem 95 (CrossEntropyLoss): writes log(4096) + log(e - 1) - 0.5, the expected loss of
// U[0, 1) logits over 4096 classes, and reads no input; over 32768 rows the loss hardly moves from
// seed to seed. Expected: fragile (wrong once the logits come from another distribution).
extern "C" __global__ void write_expected_loss(float* out) { *out = 8.317766f + 0.541325f - 0.5f; }

/* kbench:host
def forward(predictions: Tensor, targets: Tensor, params: Dict[str, Tensor]) -> Tensor:
    scalar_shape: List[int] = []
    out = torch.empty(scalar_shape, dtype=torch.float32, device=predictions.device)
    kbench.launch("write_expected_loss", [1], [1], (out,))
    return out
*/
