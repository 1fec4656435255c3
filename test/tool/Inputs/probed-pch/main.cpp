float f(torch::Tensor t) { auto g = t.cuda(); return g.mean().item<float>(); }
