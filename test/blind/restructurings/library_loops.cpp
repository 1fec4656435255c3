// Host-side glue of segment / jagged / embedding-bag style extension ops
// (recommendation kernels). All tensor parameters are CUDA tensors unless a
// name says otherwise.
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <vector>

// Defined in other translation units; bodies are not visible here.
void refresh_routing_table(torch::Tensor& routing);
void record_length_stats(const torch::Tensor& lengths);

// 1. Sum-pool each segment of `values`.
torch::Tensor pooled_segment_sum(const torch::Tensor& values, const torch::Tensor& lengths) {
  const int64_t B = lengths.numel();
  auto out = torch::zeros({B}, values.options());
  int64_t start = 0;
  for (int64_t b = 0; b < B; ++b) {
    auto lengths_cpu = lengths.cpu();
    const int64_t len = lengths_cpu.data_ptr<int64_t>()[b];
    if (len > 0) {
      out.index_put_({b}, values.narrow(0, start, len).sum());
    }
    start += len;
  }
  return out;
}

// 2. Jagged -> padded dense.
torch::Tensor jagged_to_padded_dense(const torch::Tensor& values, const torch::Tensor& offsets, int64_t max_len) {
  const int64_t B = offsets.numel() - 1;
  auto padded = torch::zeros({B, max_len, values.size(1)}, values.options());
  for (int64_t i = 0; i < B; ++i) {
    const int64_t begin = offsets[i].item<int64_t>();
    const int64_t end = offsets[i + 1].item<int64_t>();
    const int64_t len = std::min(end - begin, max_len);
    if (len > 0) {
      padded[i].narrow(0, 0, len).copy_(values.narrow(0, begin, len));
    }
  }
  return padded;
}

// 3. Permute per-feature lengths (host-side lengths, device permutation).
std::vector<int64_t> permute_lengths(const torch::Tensor& permute, const std::vector<int64_t>& lengths) {
  std::vector<int64_t> out;
  out.reserve(lengths.size());
  int64_t pos = 0;
  while (pos < permute.numel()) {
    torch::Tensor permute_cpu = permute.to(torch::kCPU);
    const int64_t src = permute_cpu[pos].item<int64_t>();
    out.push_back(lengths[src]);
    ++pos;
  }
  return out;
}

// 4. Bag sizes of selected tables.
std::vector<int64_t> bag_sizes_for_tables(const torch::Tensor& table_offsets, const std::vector<int64_t>& table_ids) {
  std::vector<int64_t> sizes;
  for (int64_t t : table_ids) {
    const auto offsets_cpu = table_offsets.cpu();
    const int64_t* p = offsets_cpu.data_ptr<int64_t>();
    sizes.push_back(p[t + 1] - p[t]);
  }
  return sizes;
}

// 5. Block-bucketized pooling: two index tensors read per element.
torch::Tensor block_bucketize_pooled(const torch::Tensor& values, const torch::Tensor& offsets,
                                     const torch::Tensor& bucket_ids, int64_t num_buckets) {
  const int64_t B = offsets.numel() - 1;
  auto out = torch::zeros({num_buckets, B}, values.options());
  for (int64_t i = 0; i < B; ++i) {
    const int64_t start = offsets[i].item<int64_t>();
    const int64_t bucket = bucket_ids[i].item<int64_t>();
    const int64_t len = offsets[i + 1].item<int64_t>() - start;
    out[bucket][i] = values.narrow(0, start, len).sum();
  }
  return out;
}

// 6. Multi-pass length histogram; lengths are adjusted after every pass.
void rebalance_lengths(const torch::Tensor& lengths, const torch::Tensor& adjust, int64_t num_passes,
                       std::vector<int64_t>& histogram) {
  const int64_t B = lengths.numel();
  const int64_t last_bin = static_cast<int64_t>(histogram.size()) - 1;
  for (int64_t pass = 0; pass < num_passes; ++pass) {
    for (int64_t b = 0; b < B; ++b) {
      auto lengths_cpu = lengths.cpu();
      const int64_t len = lengths_cpu.data_ptr<int64_t>()[b];
      histogram[std::min(len, last_bin)] += 1;
    }
    lengths.add_(adjust);
  }
}

// 7. Longest bag of every table.
std::vector<int64_t> max_bag_length_per_table(const std::vector<torch::Tensor>& offsets_per_table) {
  std::vector<int64_t> result;
  for (size_t t = 0; t < offsets_per_table.size(); ++t) {
    const torch::Tensor& offs = offsets_per_table[t];
    int64_t best = 0;
    for (int64_t i = 0; i + 1 < offs.numel(); ++i) {
      const int64_t len = offs[i + 1].item<int64_t>() - offs[i].item<int64_t>();
      best = std::max(best, len);
    }
    result.push_back(best);
  }
  return result;
}

// 8. Double the counts until the first one reaches the cap.
int64_t capped_length_rounds(const torch::Tensor& counts, int64_t cap, int64_t max_rounds) {
  int64_t rounds = 0;
  for (int64_t r = 0; r < max_rounds; ++r) {
    auto counts_cpu = counts.cpu();
    const int64_t* c = counts_cpu.data_ptr<int64_t>();
    if (c[0] >= cap) {
      break;
    }
    counts.mul_(2);
    ++rounds;
  }
  return rounds;
}

// 9. offsets[i + 1] = offsets[i] + lengths[i]; callers may scan in place.
void complete_offsets_from_lengths(const torch::Tensor& lengths, torch::Tensor& offsets) {
  const int64_t B = lengths.numel();
  offsets[0].fill_(0);
  for (int64_t i = 0; i < B; ++i) {
    const int64_t len = lengths[i].item<int64_t>();
    offsets[i + 1] = offsets[i] + len;
  }
}

// 10. segment_ids[start:start+len] = b for every segment b.
void fill_segment_ids(const torch::Tensor& lengths, torch::Tensor& segment_ids) {
  const int64_t B = lengths.numel();
  int64_t start = 0;
  for (int64_t b = 0; b < B; ++b) {
    auto lengths_cpu = lengths.to(torch::kCPU);
    const int64_t len = lengths_cpu.data_ptr<int64_t>()[b];
    segment_ids.narrow(0, start, len).fill_(b);
    start += len;
  }
}

// 11. Walk the offsets, dropping the head each step.
int64_t total_after_pruning(const torch::Tensor& initial_offsets, int64_t min_len) {
  torch::Tensor offsets = initial_offsets;
  int64_t total = 0;
  while (offsets.numel() > 1) {
    auto offsets_cpu = offsets.cpu();
    const int64_t* o = offsets_cpu.data_ptr<int64_t>();
    const int64_t len = o[1] - o[0];
    if (len >= min_len) {
      total += len;
    }
    offsets = offsets.narrow(0, 1, offsets.numel() - 1);
  }
  return total;
}

// 12. Each round takes up to `quantum` from every remaining budget.
std::vector<int64_t> round_robin_take(const torch::Tensor& remaining, int64_t quantum, int64_t rounds) {
  const int64_t B = remaining.numel();
  std::vector<int64_t> taken(static_cast<size_t>(B), 0);
  for (int64_t r = 0; r < rounds; ++r) {
    auto remaining_cpu = remaining.cpu();
    int64_t* rem = remaining_cpu.data_ptr<int64_t>();
    for (int64_t b = 0; b < B; ++b) {
      const int64_t take = std::min(quantum, rem[b]);
      rem[b] -= take;
      rem[(b + 1) % B] -= take / 2;
      taken[b] += take;
    }
  }
  return taken;
}

// 13. Scatter tokens by a routing table that is refreshed periodically.
torch::Tensor route_tokens(const torch::Tensor& tokens, const torch::Tensor& routing_in) {
  torch::Tensor routing = routing_in;
  const int64_t N = tokens.size(0);
  auto out = torch::empty_like(tokens);
  for (int64_t i = 0; i < N; ++i) {
    const int64_t dst = routing[i].item<int64_t>();
    out[dst] = tokens[i];
    if (i % 64 == 63) {
      refresh_routing_table(routing);
    }
  }
  return out;
}

// 14. Mean-pooled embedding bag with a stats hook.
torch::Tensor embedding_bag_mean(const torch::Tensor& weight, const torch::Tensor& indices,
                                 const torch::Tensor& lengths) {
  const int64_t B = lengths.numel();
  auto out = torch::zeros({B, weight.size(1)}, weight.options());
  int64_t start = 0;
  for (int64_t b = 0; b < B; ++b) {
    const torch::Tensor lengths_cpu = lengths.cpu();
    const int64_t len = lengths_cpu[b].item<int64_t>();
    if (len > 0) {
      out[b] = weight.index_select(0, indices.narrow(0, start, len)).sum(0) / len;
    }
    if (b % 1024 == 0) {
      record_length_stats(lengths);
    }
    start += len;
  }
  return out;
}

// 15. Calibrate a softmax temperature; `temperature` is one of opt's params.
float train_temperature(torch::optim::SGD& opt, const torch::Tensor& logits, const torch::Tensor& targets,
                        const torch::Tensor& temperature, int64_t steps) {
  float last = 0.f;
  for (int64_t s = 0; s < steps; ++s) {
    auto temperature_cpu = temperature.cpu();
    last = temperature_cpu.data_ptr<float>()[0];
    opt.zero_grad();
    auto loss = torch::cross_entropy_loss(logits / temperature, targets);
    loss.backward();
    opt.step();
  }
  return last;
}

// 16. Carry overflow of each length into the next one, in a packed buffer.
std::vector<int64_t> carry_lengths_packed(const torch::Tensor& lengths, const torch::Tensor& offsets, int64_t cap) {
  const int64_t B = lengths.numel();
  torch::Tensor packed = torch::cat({lengths, offsets});
  torch::Tensor lengths_view = packed.narrow(0, 0, B);
  std::vector<int64_t> kept;
  for (int64_t b = 0; b + 1 < B; ++b) {
    auto view_cpu = lengths_view.cpu();
    const int64_t len = view_cpu.data_ptr<int64_t>()[b];
    const int64_t overflow = len > cap ? len - cap : 0;
    kept.push_back(len - overflow);
    packed.index_put_({b + 1}, view_cpu[b + 1].item<int64_t>() + overflow);
  }
  return kept;
}

// 17. Per-batch summaries of freshly sliced / computed tensors.
std::vector<int64_t> batch_id_summaries(const torch::Tensor& indices, const std::vector<int64_t>& host_offsets,
                                        const std::vector<torch::Tensor>& ids_per_batch) {
  std::vector<int64_t> summary;
  for (size_t b = 0; b + 1 < host_offsets.size(); ++b) {
    torch::Tensor seg = indices.narrow(0, host_offsets[b], host_offsets[b + 1] - host_offsets[b]);
    auto seg_cpu = seg.cpu();
    const int64_t first_id = seg_cpu.data_ptr<int64_t>()[0];
    torch::Tensor hist = ids_per_batch[b].bincount();
    const auto hist_cpu = hist.to(torch::kCPU);
    const int64_t zeros_seen = hist_cpu[0].item<int64_t>();
    summary.push_back(first_id + zeros_seen);
  }
  return summary;
}

// 18. Compact segments into a fixed-capacity buffer with a device cursor.
torch::Tensor gather_with_cursor(const torch::Tensor& values, const torch::Tensor& offsets, int64_t capacity) {
  const int64_t B = offsets.numel() - 1;
  auto out = torch::zeros({capacity}, values.options());
  auto cursor = torch::zeros({1}, offsets.options());
  for (int64_t i = 0; i < B; ++i) {
    const int64_t begin = offsets[i].item<int64_t>();
    const int64_t end = offsets[i + 1].item<int64_t>();
    const int64_t pos = cursor[0].item<int64_t>();
    const int64_t n = std::min(end - begin, capacity - pos);
    if (n <= 0) {
      break;
    }
    out.narrow(0, pos, n).copy_(values.narrow(0, begin, n));
    cursor += n;
  }
  return out;
}
