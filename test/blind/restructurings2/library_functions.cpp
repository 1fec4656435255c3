// Library-style LibTorch host code of the kind found in extension ops and
// inference engines: a jagged-to-padded conversion, a segment-sum op, a greedy
// decoding loop, an embedding-bag lookup with offsets and an NMS
// post-processing step. Each one is called once per step from main().
//
// All tensors passed in by main() live on a CUDA device. Every line that makes
// the host wait for the GPU carries a trailing "SITE N" comment; see
// EXPECTED.md for the classification of each site.

#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <limits>
#include <vector>

// ---------------------------------------------------------------------------
// 1. Jagged (values, offsets) -> padded dense [B, L, D].
// ---------------------------------------------------------------------------
struct PaddedBatch {
  torch::Tensor dense;               // [B, L, D]
  std::vector<int64_t> kept_lengths; // per-row lengths after truncation to L
  int64_t tail_length = 0;           // untruncated length of the last row
};

PaddedBatch jagged_to_padded_dense(const torch::Tensor& values,
                                   const torch::Tensor& offsets,
                                   c10::optional<int64_t> max_len,
                                   int64_t max_elems, double pad_value) {
  TORCH_CHECK(values.dim() == 2, "values must be [total, D]");
  TORCH_CHECK(offsets.dim() == 1 && offsets.numel() >= 2,
              "offsets must be [B + 1] with B >= 1");
  TORCH_CHECK(offsets.scalar_type() == torch::kLong, "offsets must be int64");
  const int64_t B = offsets.size(0) - 1;
  const int64_t D = values.size(1);
  auto lengths = offsets.slice(0, 1) - offsets.slice(0, 0, B);

  int64_t L = max_len.value_or(lengths.max().item<int64_t>()); // SITE 1

  // Shrink the padded length until the dense buffer fits the budget.
  auto eff_len = lengths.clamp_max(L);
  torch::Tensor& shrink = eff_len;
  for (int64_t round = 0; round < 8; ++round) {
    auto eff_h = eff_len.to(torch::kCPU); // SITE 2
    auto ea = eff_h.accessor<int64_t, 1>();
    int64_t longest = 0;
    for (int64_t b = 0; b < B; ++b) longest = std::max(longest, ea[b]);
    L = longest;
    if (longest * B * D <= max_elems || longest <= 1) break;
    shrink.clamp_max_(longest / 2);
  }

  PaddedBatch res;
  res.dense = torch::full({B, L, D}, pad_value, values.options());
  for (int64_t b = 0; b < B; ++b) {
    const int64_t start = offsets[b].item<int64_t>(); // SITE 3
    const int64_t end = offsets[b + 1].item<int64_t>(); // SITE 4
    const int64_t n = std::min(end - start, L);
    if (n > 0) {
      res.dense[b].narrow(0, 0, n).copy_(values.narrow(0, start, n));
    }
  }

  auto len_h = lengths.cpu(); // SITE 5
  auto la = len_h.accessor<int64_t, 1>();
  for (int64_t b = 0; b < B; ++b) {
    la[b] = std::min(la[b], L);
    res.kept_lengths.push_back(la[b]);
  }
  res.tail_length = lengths[B - 1].item<int64_t>(); // SITE 6
  return res;
}

// ---------------------------------------------------------------------------
// 2. Segment sum over contiguous segments given by lengths (CSR style).
// ---------------------------------------------------------------------------
struct SegmentSumResult {
  torch::Tensor sums;                  // [S, D]
  std::vector<int64_t> segment_ends;   // inclusive prefix sums of lengths
  std::vector<int64_t> chunk_totals;   // rows per chunk of `chunk` segments
  std::vector<int64_t> chunk_longest;  // longest segment per chunk
  float min_val = 0.f, max_val = 0.f, mean_val = 0.f;
};

SegmentSumResult segment_sum(const torch::Tensor& data,
                             const torch::Tensor& lengths, int64_t chunk) {
  TORCH_CHECK(data.dim() == 2, "data must be [N, D]");
  TORCH_CHECK(data.scalar_type() == torch::kFloat, "data must be float32");
  TORCH_CHECK(lengths.dim() == 1 && lengths.numel() > 0,
              "lengths must be a non-empty 1-D tensor");
  TORCH_CHECK(lengths.scalar_type() == torch::kLong, "lengths must be int64");
  TORCH_CHECK(chunk > 0, "chunk must be positive");
  const int64_t S = lengths.size(0);
  const int64_t D = data.size(1);

  auto csum = torch::cumsum(lengths, 0);
  auto csum_h = csum.cpu(); // SITE 7
  const int64_t* ends = csum_h.data_ptr<int64_t>();
  int64_t prev = 0;
  for (int64_t s = 0; s < S; ++s) {
    TORCH_CHECK(ends[s] >= prev, "lengths must be non-negative");
    prev = ends[s];
  }

  auto seg_ids =
      torch::arange(S, lengths.options()).repeat_interleave(lengths, 0); // SITE 8
  auto sums = torch::zeros({S, D}, data.options());
  const int64_t total = csum[-1].item<int64_t>(); // SITE 9
  TORCH_CHECK(total <= data.size(0), "lengths run past the end of data");
  sums.index_add_(0, seg_ids, data.narrow(0, 0, total));

  SegmentSumResult r;
  r.segment_ends.assign(ends, ends + S);

  // Per-chunk bookkeeping for the host-side scheduler.
  auto chunk_csum = torch::empty({0}, lengths.options());
  const int64_t num_chunks = (S + chunk - 1) / chunk;
  for (int64_t c = 0; c < num_chunks; ++c) {
    const int64_t lo = c * chunk;
    const int64_t n = std::min(chunk, S - lo);
    auto lengths_h = lengths.cpu(); // SITE 10
    const int64_t* lh = lengths_h.data_ptr<int64_t>();
    r.chunk_longest.push_back(*std::max_element(lh + lo, lh + lo + n));
    torch::cumsum_out(chunk_csum, lengths.narrow(0, lo, n), 0);
    auto chunk_h = chunk_csum.cpu(); // SITE 11
    r.chunk_totals.push_back(chunk_h.data_ptr<int64_t>()[n - 1]);
  }

  r.min_val = sums.min().item<float>(); // SITE 12
  r.max_val = sums.max().item<float>(); // SITE 13
  r.mean_val = sums.mean().item<float>(); // SITE 14
  r.sums = sums;
  return r;
}

// ---------------------------------------------------------------------------
// 3. Greedy (optionally Gumbel-perturbed) decoding of one sequence with a toy
//    tied-embedding decoder and a draft model on a second GPU.
// ---------------------------------------------------------------------------
struct DecodeResult {
  std::vector<int64_t> tokens;
  double logprob = 0.0;
};

DecodeResult greedy_decode(const torch::Tensor& embed,   // [V, H]
                           const torch::Tensor& w_out,   // [H, V]
                           int64_t bos_id,
                           const torch::Tensor& eos_ids, // [E] int64
                           const torch::Tensor& length_budget,
                           c10::optional<int64_t> max_new_tokens,
                           c10::optional<int64_t> seed,
                           torch::Tensor& seed_counter,  // [] int64, persistent
                           double temperature,
                           const torch::Device& draft_device) {
  TORCH_CHECK(embed.dim() == 2 && w_out.dim() == 2 &&
                  embed.size(1) == w_out.size(0) &&
                  embed.size(0) == w_out.size(1),
              "embed must be [V, H] and w_out [H, V]");
  TORCH_CHECK(eos_ids.scalar_type() == torch::kLong, "eos_ids must be int64");
  TORCH_CHECK(length_budget.scalar_type() == torch::kLong,
              "length_budget must be int64");
  TORCH_CHECK(draft_device.is_cuda(), "the draft model must live on a GPU");
  const int64_t V = w_out.size(1);

  const int64_t steps =
      max_new_tokens.value_or(length_budget.sum().item<int64_t>()); // SITE 15
  const int64_t call_seed =
      seed.value_or(seed_counter.add_(1).item<int64_t>()); // SITE 16

  auto state = torch::tanh(embed[bos_id]); // [H]
  auto coverage = torch::zeros({V}, w_out.options());
  DecodeResult res;
  for (int64_t t = 0; t < steps; ++t) {
    auto eos_h = eos_ids.to(torch::kCPU); // SITE 17
    auto logits = torch::matmul(state, w_out); // [V]
    // Ensemble with the draft model (GPU-to-GPU copies only).
    auto draft_logits =
        torch::matmul(state.to(draft_device), w_out.to(draft_device));
    logits = logits + 0.1 * draft_logits.to(logits.device());
    if (temperature > 0.0) {
      auto pos = torch::arange(V, logits.options()) +
                 static_cast<double>(call_seed * 7919 + t);
      auto u = torch::frac(torch::sin(pos * 12.9898) * 43758.5453)
                   .abs()
                   .clamp(1e-6, 1.0 - 1e-6);
      logits = logits / temperature - torch::log(-torch::log(u));
    }
    auto lp = torch::log_softmax(logits, 0);
    auto top = lp.max(0);
    const int64_t tok = std::get<1>(top).item<int64_t>(); // SITE 18
    const double tok_lp = std::get<0>(top).item<double>(); // SITE 19
    res.tokens.push_back(tok);
    res.logprob += tok_lp;

    // Stop when most of the vocabulary has been "covered" too often.
    coverage.add_(torch::softmax(logits, 0));
    auto cov_h = coverage.cpu(); // SITE 20
    const float* cv = cov_h.data_ptr<float>();
    int64_t saturated = 0;
    for (int64_t v = 0; v < V; ++v) saturated += cv[v] > 2.0f ? 1 : 0;
    if (saturated > V / 2) break;

    const int64_t* eos = eos_h.data_ptr<int64_t>();
    const int64_t E = eos_h.numel();
    if (std::find(eos, eos + E, tok) != eos + E) break;
    state = torch::tanh(state + embed[tok]);
  }
  return res;
}

// ---------------------------------------------------------------------------
// 4. Embedding-bag (mean) lookup with offsets, per-sample weights, a learned
//    default row for empty bags and a host-side prefetch list.
// ---------------------------------------------------------------------------
struct BagResult {
  torch::Tensor pooled;                // [B, D]
  std::vector<int64_t> bag_sizes;
  std::vector<int64_t> prefetch_rows;  // distinct rows, first-seen order
  int64_t widest_bag = -1;
  double widest_norm = 0.0;
};

BagResult embedding_bag_mean(const torch::Tensor& weight,   // [N, D]
                             const torch::Tensor& indices,  // [nnz] int64
                             const torch::Tensor& offsets,  // [B + 1] int64
                             const torch::Tensor& default_row, // [D]
                             const c10::optional<torch::Tensor>& per_sample_weights,
                             int64_t max_prefetch) {
  TORCH_CHECK(weight.dim() == 2, "weight must be [N, D]");
  TORCH_CHECK(indices.dim() == 1 && offsets.dim() == 1 && offsets.numel() >= 2,
              "indices must be 1-D and offsets [B + 1] with B >= 1");
  TORCH_CHECK(indices.scalar_type() == torch::kLong &&
                  offsets.scalar_type() == torch::kLong,
              "indices and offsets must be int64");
  TORCH_CHECK(default_row.dim() == 1 && default_row.size(0) == weight.size(1) &&
                  default_row.scalar_type() == weight.scalar_type() &&
                  default_row.device() == weight.device(),
              "default_row must match weight");
  const int64_t B = offsets.size(0) - 1;
  const int64_t D = weight.size(1);

  BagResult res;
  const int64_t nnz = offsets[-1].item<int64_t>(); // SITE 21
  TORCH_CHECK(nnz == indices.size(0), "offsets[-1] must equal indices.size(0)");
  if (nnz == 0) {
    res.bag_sizes.assign(B, 0);
    res.pooled = default_row.unsqueeze(0).expand({B, D}).clone();
    return res;
  }

  auto bag_len = offsets.slice(0, 1) - offsets.slice(0, 0, B);
  auto bag_ids = torch::repeat_interleave(bag_len); // SITE 22
  auto rows = weight.index_select(0, indices);
  if (per_sample_weights.has_value()) {
    rows = rows * per_sample_weights->unsqueeze(1);
  }
  auto out = torch::zeros({B, D}, weight.options()).index_add_(0, bag_ids, rows);
  out.div_(bag_len.clamp_min(1).unsqueeze(1).to(out.scalar_type()));

  auto empty_h = (bag_len == 0).cpu(); // SITE 23
  auto empty = empty_h.accessor<bool, 1>();
  for (int64_t b = 0; b < B; ++b) {
    if (empty[b]) out[b].copy_(default_row);
  }

  auto offsets_h = offsets.cpu(); // SITE 24
  auto oa = offsets_h.accessor<int64_t, 1>();
  res.bag_sizes.resize(B);
  for (int64_t b = 0; b < B; ++b) res.bag_sizes[b] = oa[b + 1] - oa[b];

  // Distinct rows for the parameter-server prefetch, in first-seen order.
  auto pending = indices.clone();
  for (int64_t i = 0;
       i < nnz && static_cast<int64_t>(res.prefetch_rows.size()) < max_prefetch;
       ++i) {
    const int64_t id = pending[i].item<int64_t>(); // SITE 25
    if (id < 0) continue;
    res.prefetch_rows.push_back(id);
    pending.masked_fill_(pending == id, -1);
  }

  // Monitoring: norm of the widest bag.
  res.widest_bag = bag_len.argmax().item<int64_t>(); // SITE 26
  res.widest_norm = out[res.widest_bag].norm().item<double>(); // SITE 27
  res.pooled = out;
  return res;
}

// ---------------------------------------------------------------------------
// 5. Detection post-processing: pre-NMS top-k, score threshold, hard or soft
//    NMS, host-side result lists.
// ---------------------------------------------------------------------------
struct Detections {
  std::vector<int64_t> keep;        // indices into the input boxes
  std::vector<float> areas;         // area of each kept box
  std::vector<float> rel_scores;    // score / best score for each kept box
  int64_t best_index = -1;
  float best_score = 0.f;
};

Detections nms_postprocess(const torch::Tensor& boxes,   // [N, 4] float32
                           const torch::Tensor& scores,  // [N] float32
                           double iou_thr, double score_thr,
                           int64_t pre_nms_topk, double soft_sigma,
                           c10::optional<double> image_height) {
  TORCH_CHECK(boxes.dim() == 2 && boxes.size(1) == 4, "boxes must be [N, 4]");
  TORCH_CHECK(boxes.scalar_type() == torch::kFloat &&
                  scores.scalar_type() == torch::kFloat,
              "boxes and scores must be float32");
  TORCH_CHECK(scores.dim() == 1 && scores.size(0) == boxes.size(0),
              "scores must be [N]");
  TORCH_CHECK(pre_nms_topk > 0, "pre_nms_topk must be positive");

  const double clip_h =
      image_height.value_or(boxes.select(1, 3).max().item<double>()); // SITE 28
  Detections det;
  const int64_t N = scores.size(0);
  if (N == 0) return det;
  auto clipped = boxes.clamp(0.0, clip_h);

  const int64_t k = std::min(pre_nms_topk, N);
  auto top_idx = std::get<1>(scores.topk(k));
  auto cand_mask = torch::zeros({N}, scores.options().dtype(torch::kBool))
                       .index_fill_(0, top_idx, true);
  auto cand = cand_mask.nonzero().squeeze(1); // SITE 29
  auto passing = scores.index_select(0, cand) > score_thr;
  auto kept = cand.masked_select(passing); // SITE 30
  const int64_t M = kept.size(0);
  if (M == 0) return det;

  auto sorted = scores.index_select(0, kept).sort(0, /*descending=*/true);
  auto s_sorted = std::get<0>(sorted);
  auto kept_sorted = kept.index_select(0, std::get<1>(sorted));
  det.best_index = kept_sorted[0].item<int64_t>(); // SITE 31

  auto b = clipped.index_select(0, kept_sorted);
  auto x1 = b.select(1, 0), y1 = b.select(1, 1);
  auto x2 = b.select(1, 2), y2 = b.select(1, 3);
  auto areas = (x2 - x1).clamp_min(0) * (y2 - y1).clamp_min(0);
  auto iw = (torch::minimum(x2.unsqueeze(1), x2.unsqueeze(0)) -
             torch::maximum(x1.unsqueeze(1), x1.unsqueeze(0)))
                .clamp_min(0);
  auto ih = (torch::minimum(y2.unsqueeze(1), y2.unsqueeze(0)) -
             torch::maximum(y1.unsqueeze(1), y1.unsqueeze(0)))
                .clamp_min(0);
  auto inter = iw * ih;
  auto iou =
      inter / (areas.unsqueeze(1) + areas.unsqueeze(0) - inter).clamp_min(1e-9);

  std::vector<int64_t> keep_local;
  if (soft_sigma > 0.0) {
    // Soft-NMS: decay overlapping scores instead of dropping the boxes.
    auto work = s_sorted.clone();
    for (int64_t r = 0; r < M; ++r) {
      auto work_h = work.cpu(); // SITE 32
      const float* w = work_h.data_ptr<float>();
      const int64_t i = std::max_element(w, w + M) - w;
      if (w[i] < score_thr) break;
      keep_local.push_back(i);
      work.mul_(torch::exp(-(iou[i] * iou[i]) / soft_sigma));
      work[i].fill_(-std::numeric_limits<float>::infinity());
    }
  } else {
    // Hard NMS: greedy suppression in score order.
    std::vector<char> suppressed(M, 0);
    for (int64_t i = 0; i < M; ++i) {
      if (suppressed[i]) continue;
      keep_local.push_back(i);
      auto over_h = (iou[i] > iou_thr).cpu(); // SITE 33
      auto over = over_h.accessor<bool, 1>();
      for (int64_t j = i + 1; j < M; ++j) {
        if (over[j]) suppressed[j] = 1;
      }
    }
  }

  for (int64_t i : keep_local) {
    det.areas.push_back(areas[i].item<float>()); // SITE 34
  }

  det.best_score = s_sorted[0].item<float>(); // SITE 35
  s_sorted = s_sorted / det.best_score;
  auto rel_h = s_sorted.cpu(); // SITE 36
  auto kept_h = kept_sorted.cpu(); // SITE 37
  const float* rel = rel_h.data_ptr<float>();
  const int64_t* kp = kept_h.data_ptr<int64_t>();
  for (int64_t i : keep_local) {
    det.keep.push_back(kp[i]);
    det.rel_scores.push_back(rel[i]);
  }
  return det;
}

// ---------------------------------------------------------------------------
// Driver: each function runs once per step.
// ---------------------------------------------------------------------------
int main() {
  if (!torch::cuda::is_available()) {
    std::cerr << "CUDA is required\n";
    return 1;
  }
  const torch::Device dev(torch::kCUDA, 0);
  const torch::Device draft_dev(torch::kCUDA,
                                torch::cuda::device_count() > 1 ? 1 : 0);
  auto f32 = torch::TensorOptions().dtype(torch::kFloat).device(dev);
  auto i64 = torch::TensorOptions().dtype(torch::kLong).device(dev);

  // Jagged batch: B = 64 rows whose lengths follow (7 b) mod 4, so the total
  // (96) is known on the host without reading anything back.
  const int64_t B = 64, D = 16, total = 96;
  auto row_len = (torch::arange(B, i64) * 7).remainder(4);
  auto offsets = torch::cat({torch::zeros({1}, i64), torch::cumsum(row_len, 0)});
  auto values = torch::randn({total, D}, f32);

  auto weight = torch::randn({1000, D}, f32);
  auto bag_indices = torch::randint(0, 1000, {total}, i64);
  auto default_row = torch::zeros({D}, f32);

  const int64_t V = 512, H = 64;
  auto embed = torch::randn({V, H}, f32) * 0.1;
  auto w_out = torch::randn({H, V}, f32) * 0.1;
  auto eos_ids = torch::arange(2, i64);
  auto length_budget = torch::full({}, 32, i64);
  auto seed_counter = torch::zeros({}, i64);

  int64_t checksum = 0;
  for (int64_t step = 0; step < 100; ++step) {
    const c10::optional<int64_t> cap =
        step % 2 == 0 ? c10::optional<int64_t>(4) : c10::nullopt;
    auto padded = jagged_to_padded_dense(values, offsets, cap, 4096, 0.0);
    checksum += padded.tail_length;

    auto seg = segment_sum(values, row_len, 16);
    checksum += static_cast<int64_t>(seg.chunk_totals.size());

    auto dec = greedy_decode(embed, w_out, /*bos_id=*/1, eos_ids, length_budget,
                             step % 3 == 0 ? c10::optional<int64_t>(8)
                                           : c10::nullopt,
                             c10::nullopt, seed_counter,
                             step % 2 == 0 ? 0.0 : 0.7, draft_dev);
    checksum += static_cast<int64_t>(dec.tokens.size());

    auto bag = embedding_bag_mean(weight, bag_indices, offsets, default_row,
                                  c10::nullopt, /*max_prefetch=*/32);
    checksum += bag.widest_bag;

    auto xy = torch::rand({200, 2}, f32) * 500;
    auto wh = torch::rand({200, 2}, f32) * 80 + 4;
    auto boxes = torch::cat({xy, xy + wh}, 1);
    auto scores = torch::rand({200}, f32);
    auto det = nms_postprocess(boxes, scores, 0.5, 0.05, 100,
                               step % 4 == 0 ? 0.5 : 0.0,
                               c10::optional<double>(600.0));
    checksum += static_cast<int64_t>(det.keep.size());
  }
  std::cout << "checksum " << checksum << "\n";
  return 0;
}
