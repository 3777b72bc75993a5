"""Device-check: measure.py's PLAN=1 shapes, then new shapes, until the deadline."""
import os, sys, time, json
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "data", "h100-single-gpu"))
import torch
import measure
deadline = time.time() + float(os.environ.get("BUDGET_S", "280"))
torch.backends.cuda.matmul.allow_tf32 = True
plan = [("llama-3.2-1b", 4096, 8, mb, False) for mb in (1, 2, 4, 8)]
plan += [("llama-3.2-1b", 4096, 8, 8, True)]
plan += [("llama-3.2-3b", 4096, 8, mb, False) for mb in (1, 2, 4)]
plan += [("llama-3.2-3b", 4096, 8, 8, True)]
plan += [("gpt2-medium", 1024, 64, mb, False) for mb in (8, 16, 32, 64)]
plan += [("qwen2.5-0.5b", 2048, 32, mb, False) for mb in (8, 16, 32)]
plan += [("qwen2.5-0.5b", 2048, 32, 32, True)]
plan += [("llama-3.2-3b", 2048, 16, mb, True) for mb in (4, 8, 16)]
plan += [("gpt-2.7b", 1024, 32, mb, False) for mb in (4, 8, 16)]
for p in plan:
    if time.time() > deadline:
        print(json.dumps(dict(skipped=p)), flush=True)
        continue
    measure.case(*p)
if time.time() < deadline - 60:
    measure.case("llama-3.2-1b", 4096, 8, 2, False, compile_blocks=True)
