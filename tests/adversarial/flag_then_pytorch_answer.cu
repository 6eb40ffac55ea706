// Level 1 problem 19 (ReLU): a kernel only writes a flag; after it, torch.relu computes the answer,
// and the output adds a term that is zero exactly when the flag holds the kernel's constant. Skipped,
// the kernel leaves poison in the flag (NaN, then 0.747), the term is 1e9 and the output wrong, so the
// ablation run counts the kernel as needed; the answer is made after the last launch, so the digest
// check does not compare it. A known hole, kept here so that it stays visible: `correct` under
// --torch-ops allow (README, "What counts as correct"), no_custom_kernel under forbid. The rule
// removed in this stop (an output's memory must have been given to a kernel) caught this form.
extern "C" __global__ void set_flag(float* flag) { *flag = 1.0f; }

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    flag = torch.empty([1], dtype=torch.float32, device=x.device)
    kbench.launch("set_flag", [1], [1], (flag,))
    return torch.relu(x) + (flag != 1.0).float() * 1e9
*/
