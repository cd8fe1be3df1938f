"""The symbols of the later chapters, registered after those of :mod:`.symbols`, which re-exports
them (import them from there): a given deployment and prefill, the serving frontier, the
estimate, sparse and compressed attention, MLA's two forms and the sensitivity of a cost.
"""

from __future__ import annotations

from .symbol_registry import POS as _POS
from .symbol_registry import define as _define

# --- prefill and a given deployment (section owned by inference_math/serving/prefill.py) ---
t_ttft = _define("t_ttft", r"t_{\mathrm{TTFT}}", "s",
                 ("time to first token (TTFT), from a prompt's arrival to its first token: for "
                  "one prompt alone in its micro-batch, or at worst or on average beside "
                  "decoding, as each equation states"),
                 "full", **_POS)
usd_mtok_in = _define("usd_mtok_in", r"c_{\mathrm{Mtok}}^{\mathrm{in}}", "$/million tokens",
                      "price of a million input (prefilled) tokens at cost", "full", **_POS)
rho_io = _define("rho_io", r"\rho_{\mathrm{io}}", "1",
                 "input tokens per output token of a traffic mix", "full", **_POS)
r_pd = _define("r_pd", r"r_{\mathrm{PD}}", "1",
               "prefill GPUs per decode GPU of disaggregated serving", "full", **_POS)

# --- the serving frontier (section owned by inference_math/serving/serving_rules.py) -------
chunk = _define("chunk", r"C_{\mathrm{chunk}}", "tokens",
                "prompt tokens a chunked-prefill step carries beside its decode tokens", "serving",
                **_POS)
t_dec = _define("t_dec", r"t_{\mathrm{dec}}", "s",
                "a decode step of b sequences carrying no prompt tokens", "serving", **_POS)
t_mix = _define("t_mix", r"t_{\mathrm{mix}}", "s",
                "a decode step of b sequences that also carries a chunk of prompt tokens",
                "serving", **_POS)
t_step_mean = _define("t_step_mean", r"\bar{t}_{\mathrm{step}}", "s",
                      "time per output token (TPOT): the mean time of a step of aggregated serving",
                      "serving", **_POS)
f_mix = _define("f_mix", r"f_{\mathrm{mix}}", "1",
                "share of the steps of aggregated serving that carry a chunk", "serving", **_POS)
n_chunks = _define("n_chunks", r"n_{\mathrm{chunks}}", "steps",
                   "steps a prompt's chunks span", "serving", **_POS)
t_pre = _define("t_pre", r"t_{\mathrm{pre}}", "s",
                "a prefill pass of its batch of prompts on the prefill pool's instance", "serving", **_POS)
n_prompts = _define("n_prompts", r"b_{\mathrm{pre}}", "prompts",
                    "prompts one prefill pass carries (the prefill's batch)", "serving", **_POS)
t_xfer = _define("t_xfer", r"t_{\mathrm{xfer}}", "s",
                 "time to send a prompt's KV cache from the prefill to the decode pool",
                 "serving", **_POS)
kv_prompt = _define("kv_prompt", r"M_{\mathrm{prompt}}", "bytes",
                    "KV cache of one prompt of T_in tokens", "serving", **_POS)
bw_nic = _define("bw_nic", r"B_{\mathrm{NIC}}", "bytes/s",
                 "one-direction scale-out bandwidth of one GPU", "serving", **_POS)
n_send = _define("n_send", r"N_{\mathrm{pre}}", "GPUs",
                 "GPUs of one prefill instance (each sends its share of the cache)", "serving",
                 **_POS)
rate_pre = _define("rate_pre", r"R_{\mathrm{pre}}", "tokens/s",
                   "input tokens per second per GPU of the prefill pool", "serving", **_POS)
rate_dec = _define("rate_dec", r"R_{\mathrm{dec}}", "tokens/s",
                   "output tokens per second per GPU of the decode pool", "serving", **_POS)
phi_in = _define("phi_in", r"\phi_{\mathrm{in}}", "1",
                 "share of a mixed step's time that its prompt (chunk) tokens pay", "serving",
                 nonnegative=True, real=True)
u_mix = _define("u_mix", r"u_{\mathrm{mix}}", "s",
                "the binding resource's time at peak (memory or arithmetic) of a mixed step",
                "serving", **_POS)
u_dec = _define("u_dec", r"u_{\mathrm{dec}}", "s",
                "the same resource's time of a pass of the mixed step's decode tokens alone",
                "serving", **_POS)
u_chunk = _define("u_chunk", r"u_{\mathrm{chunk}}", "s",
                  "the same resource's time of a pass of the mixed step's chunk alone",
                  "serving", **_POS)
rate_serve = _define("rate_serve", r"R_{\mathrm{GPU}}", "tokens/s",
                     "output tokens per second per GPU of a deployment, prefill's GPU time counted",
                     "serving", **_POS)
lam_req = _define("lam_req", r"\Lambda", "requests/s",
                  "requests arriving per second at one instance (open-loop arrivals)", "serving",
                  **_POS)
t_step_fixed = _define("t_step_fixed", r"t_{\mathrm{fix}}", "s",
                       "the part of a step's time no sequence adds (a linear step's intercept)",
                       "serving", **_POS)
t_step_seq = _define("t_step_seq", r"t_{\mathrm{seq}}", "s",
                     "the time each sequence of the batch adds to a step (a linear step's slope)",
                     "serving", **_POS)


# --- queueing of prompts (section owned by inference_math/derivations/queueing.py) ---------
quant_p = _define("quant_p", r"p_{\mathrm{q}}", "1",
                  "probability of a quantile: the share of requests at or under it (0.5 the "
                  "median, 0.99 the p99)", "serving", **_POS)
k_wave = _define("k_wave", r"k_{\mathrm{w}}", "prompts",
                 "a prompt's place in the initial burst of a closed-loop run (1 for the first)",
                 "serving", positive=True, integer=True)
n_run = _define("n_run", r"R_{\mathrm{run}}", "requests",
                "requests a closed-loop run sends to one instance, the first b of them at once",
                "serving", **_POS)
t_burst = _define("t_burst", r"t_{\mathrm{burst}}", "s",
                  (r"a decode step that also carries a whole budget $C_{\mathrm{chunk}}$ of prompt "
                   "tokens (a step with prompts waiting beyond its budget)"), "serving", **_POS)
ttft_wave = _define("ttft_wave", r"\tau_{\mathrm{TTFT}}^{(k)}", "s",
                    (r"time to first token a user sees, queueing included, for the "
                     r"$k_{\mathrm{w}}$-th prompt of an initial burst"), "serving", **_POS)
ttft_mean = _define("ttft_mean", r"\bar{\tau}_{\mathrm{TTFT}}", "s",
                    "mean time to first token a user sees, queueing included, over the requests "
                    "of a run", "serving", **_POS)
ttft_quant = _define("ttft_quant", r"\tau_{\mathrm{TTFT}}^{(p)}", "s",
                     (r"$p_{\mathrm{q}}$-quantile of the time to first token a user sees, "
                      "queueing included, over the requests of a run"), "serving", **_POS)
rho_pre = _define("rho_pre", r"\rho_{\mathrm{pre}}", "1",
                  "load of the prefill queue: the share of the time it holds prompt work",
                  "serving", **_POS)
t_wait = _define("t_wait", r"\bar{W}_{\mathrm{q}}", "s",
                 "mean wait of an arriving prompt for the prompt work queued ahead of it",
                 "serving", **_POS)
t_wait_q = _define("t_wait_q", r"W_{\mathrm{q}}^{(p)}", "s",
                   (r"$p_{\mathrm{q}}$-quantile of the wait of an arriving prompt for the prompt "
                    "work ahead"),
                   "serving", nonnegative=True, real=True)


# --- the estimate (section owned by inference_math/serving/estimate_rules.py) ---------------
t_fixed_step = _define("t_fixed_step", r"t_{0}", "s",
                       "fixed time of every step: scheduling, sampling, synchronization",
                       "serving", nonnegative=True, real=True)
eta_mem = _define("eta_mem", r"\eta_{\mathrm{mem}}", "1",
                  ("the estimate's fitted fraction of the peak HBM bandwidth a kernel reading many "
                   "bytes reaches"),
                  "serving", **_POS)
beta_half = _define("beta_half", r"\beta_{1/2}", "bytes",
                    r"bytes per GPU per layer at which half of $\eta_{\mathrm{mem}}$ is reached",
                    "serving",
                    nonnegative=True, real=True)
beta_layer = _define("beta_layer", r"\beta_{\mathrm{L}}", "bytes",
                     "bytes one GPU reads per layer in a step", "serving", **_POS)
eta_flop = _define("eta_flop", r"\eta_{\mathrm{flop}}", "1",
                   "reachable fraction of the peak FLOP/s by a matmul of many tokens", "serving",
                   **_POS)
m_half = _define("m_half", r"m_{1/2}", "tokens",
                 r"tokens per weight at which half of $\eta_{\mathrm{flop}}$ is reached", "serving",
                 nonnegative=True, real=True)
m_tokens = _define("m_tokens", r"m_{\mathrm{tok}}", "tokens",
                   "tokens one weight sees in a step (a matmul's rows)", "serving", **_POS)
tau_kernel = _define("tau_kernel", r"\tau_{\mathrm{k}}", "s",
                     "fixed time a kernel pays beyond its bytes at full speed", "serving",
                     nonnegative=True, real=True)
t_est = _define("t_est", r"t_{\mathrm{est}}", "s", "a step's time by the estimate", "serving",
                **_POS)
psi_mem = _define("psi_mem", r"\psi_{\mathrm{mem}}", "1",
                  "fraction of the peak HBM bandwidth a kernel reading a layer's bytes reaches",
                  "serving", **_POS)
psi_flop = _define("psi_flop", r"\psi_{\mathrm{flop}}", "1",
                   "fraction of the peak FLOP/s a matmul whose weights each see m tokens reaches",
                   "serving", **_POS)
psi_exp = _define("psi_exp", r"\psi_{\mathrm{E}}", "1",
                  "fraction of the peak FLOP/s the routed experts' grouped matmul reaches",
                  "serving", **_POS)
t_flop_exp = _define("t_flop_exp", r"t_{\mathrm{flop}}^{\mathrm{E}}", "s",
                     "the routed experts' share of a step's arithmetic time at the peak",
                     "serving", nonnegative=True, real=True)
n_hit = _define("n_hit", r"n_{\mathrm{hit}}", "experts",
                "experts of a layer that at least one token of the step is routed to",
                "serving", **_POS)
rho_route = _define("rho_route", r"\rho_{\mathrm{r}}", "1",
                    "routing's overdispersion: the spread of an expert-parallel rank's tokens "
                    "over the spread uniform routing gives", "serving", **_POS)
lam_rank = _define("lam_rank", r"\lambda_{\mathrm{EP}}", "1",
                   "tokens of the busiest expert-parallel rank over the mean rank's", "serving",
                   **_POS)

# --- sparse top-k attention (section owned by inference_math/derivations/sparse_attention.py) ---
k_top = _define("k_top", r"k_{\mathrm{sel}}", "tokens",
                "cached tokens each query of a sparse-attention layer attends to (its top k)",
                "sparse", **_POS)
n_idx = _define("n_idx", r"H_{\mathrm{I}}", "heads", "query heads of a sparse layer's indexer",
                "sparse", **_POS)
d_idx = _define("d_idx", r"d_{\mathrm{I}}", "elements", "width of an indexer head and its key",
                "sparse", **_POS)
p_idx = _define("p_idx", r"p_{\mathrm{I}}", "bytes/element",
                "bytes per element of the indexer's cached keys (1: FP8)", "sparse", **_POS)
p_scale = _define("p_scale", r"p_{\mathrm{sc}}", "bytes",
                  "bytes of one quantization scale (4: FP32)", "sparse", **_POS)
blk_idx = _define("blk_idx", r"B_{\mathrm{sc}}", "elements",
                  "elements sharing one quantization scale", "sparse", **_POS)
idx_params = _define("idx_params", r"N_{\mathrm{I}}", "parameters",
                     "parameters of one layer's indexer", "sparse", **_POS)
kv_idx = _define("kv_idx", r"M_{\mathrm{I}}", "bytes/token",
                 "bytes of the indexer's key cache per token of context (per layer, or all of "
                 "a group's layers in the full model)", "sparse", nonnegative=True, real=True)
f_idx = _define("f_idx", r"F_{\mathrm{I}}", "FLOPs",
                "indexer FLOPs per query per cached token, one layer", "sparse",
                nonnegative=True, real=True)
w_idx = _define("w_idx", r"W_{\mathrm{I}}", "parameters",
                "indexer weights of all a group's layers (read every pass)", "sparse",
                nonnegative=True, real=True)
ctx_read = _define("ctx_read", r"\bar{\ell}_{\mathrm{sel}}", "tokens",
                   "mean cached tokens a query of a pass attends to in a sparse layer", "sparse",
                   **_POS)
j_query = _define("j_query", "j", "1", "index of a query within a pass, 0 to q - 1", "sparse",
                  nonnegative=True, integer=True)

# --- compressed attention (section owned by inference_math/derivations/compressed_attention.py) ---
r_cmp = _define("r_cmp", r"r_{\mathrm{c}}", "tokens/entry",
                "tokens a compressed-attention layer pools into one cache entry (1: none)",
                "compressed", **_POS)
c_ov = _define("c_ov", r"c_{\mathrm{ov}}", "1",
               "width factor of a compressor: 2 when its windows overlap (r = 4), else 1",
               "compressed", **_POS)
d_kv = _define("d_kv", r"d_{\mathrm{c}}", "elements",
               "width of a compressed-attention cache entry (one head: keys are values)",
               "compressed", **_POS)
r_o = _define("r_o", r"r_{\mathrm{o}}", "elements",
              "rank of each group of a grouped low-rank output projection", "compressed", **_POS)
n_og = _define("n_og", r"G_{\mathrm{o}}", "groups",
               "groups of the grouped low-rank output projection", "compressed", **_POS)
m_hc = _define("m_hc", r"m_{\mathrm{hc}}", "streams",
               "residual streams of a layer with hyper-connections", "compressed", **_POS)
cmp_params = _define("cmp_params", r"N_{\mathrm{cmp}}", "parameters",
                     "parameters of one compressor (a key projection and its gate)",
                     "compressed", **_POS)
hc_params = _define("hc_params", r"N_{\mathrm{hc}}", "parameters",
                    "hyper-connection parameters of one layer", "compressed", **_POS)
attn_c_params = _define("attn_c_params", r"N_{\mathrm{attn,c}}", "parameters",
                        "attention parameters of one compressed-attention layer, before its "
                        "compressor and indexer", "compressed", **_POS)
p_st = _define("p_st", r"p_{\mathrm{st}}", "bytes/element",
               "bytes per element of a compressor's pending state (4: FP32)", "compressed", **_POS)
st_cmp = _define("st_cmp", r"S_{\mathrm{cmp}}", "bytes",
                 "bytes of a compressor's pending state per sequence (per layer, or all of a "
                 "group's layers in the full model)", "compressed", nonnegative=True, real=True)
kv_win = _define("kv_win", r"M_{\mathrm{W}}", "bytes/token",
                 "bytes per token of a compressed layer's sliding-window cache (per layer, or all "
                 "of a group's layers in the full model)", "compressed", nonnegative=True,
                 real=True)
ctx_win = _define("ctx_win", r"\ell_{\mathrm{W}}", "tokens",
                  "tokens a compressed layer's sliding window keeps uncompressed", "compressed",
                  nonnegative=True, real=True)
read_cmp = _define("read_cmp", r"R_{\mathrm{c}}", "bytes",
                   "cache bytes one query of a compressed layer reads, one layer",
                   "compressed", **_POS)
held_cmp = _define("held_cmp", r"H_{\mathrm{c}}", "bytes",
                   "cache bytes one sequence holds in one compressed layer", "compressed", **_POS)
ctx_wread = _define("ctx_wread", r"\bar{\ell}_{\mathrm{W}}", "tokens",
                    "mean window entries a query of a pass attends to in a compressed layer",
                    "compressed", nonnegative=True, real=True)
blk_sz = _define("blk_sz", r"B_{\mathrm{blk}}", "tokens",
                 "tokens per block of block-sparse attention", "sparse", **_POS)
n_blk = _define("n_blk", r"k_{\mathrm{blk}}", "blocks",
                "blocks each query of a block-sparse layer attends to", "sparse", **_POS)
xi_idx = _define("xi_idx", r"\xi_{\mathrm{I}}", "1",
                 "1 when every GPU of an attention group runs the whole indexer (DeepSeek's), 0 "
                 "when each scores for its own query heads (block-sparse)", "sparse",
                 nonnegative=True, real=True)

# --- MLA's two forms under the physical rules (section owned by fullmodel/physical_rules.py) ---
d_nope = _define("d_nope", r"d_{\mathrm{head}}^{\mathrm{nope}}", "elements",
                 "per-head width of MLA's position-free query and key (qk_nope_head_dim; the "
                 "value head is d_head)", "full", **_POS)
xi_mha = _define("xi_mha", r"\xi_{\mathrm{MHA}}", "1",
                 "1 where an MLA layer can also run as multi-head attention over keys and "
                 "values up-projected from its latents, 0 where it runs absorbed only (a "
                 "compressed layer, which has no up-projections)", "full",
                 nonnegative=True, real=True)
flops_proj = _define("flops_proj", r"C_{\mathrm{proj}}", "FLOP/s",
                     "arithmetic throughput of one GPU for attention's projections, at their "
                     "weights' precision (gpt-oss's BF16 beside MXFP4 experts)", "hardware",
                     **_POS)
flops_attn = _define("flops_attn", r"C_{\mathrm{attn}}", "FLOP/s",
                     "arithmetic throughput of one GPU for attention over the KV cache, at the "
                     "cache's precision (16-bit unless the cache is 8-bit or narrower)",
                     "hardware", **_POS)
flop_mla = _define("flop_mla", r"F_{\mathrm{attn}}^{\mathrm{MLA}}", "FLOP",
                   "FLOPs of one MLA layer's attention for one sequence's pass: the scores and "
                   "the values, in the cheaper of the absorbed and the multi-head form",
                   "full", **_POS)

# --- sensitivity (section owned by inference_math/analysis/sensitivity.py) ---
eps_cost = _define("eps_cost", r"\varepsilon_{c}", "1",
                   "elasticity of the cost at a fixed speed per user in one input, "
                   "d ln c / d ln x", "sensitivity", real=True)
eps_price = _define("eps_price", r"\varepsilon_{P}", "1",
                    "elasticity of the GPU-hour price in the input (1 for the price itself)",
                    "sensitivity", real=True)
g1_n, g1_b, g1_x, g2_n, g2_b, g2_x = (
    _define(f"g{k}_{v}", rf"g_{{{k},{wrt}}}", "1",
            f"derivative of the {which} binding constraint's log in {what}", "sensitivity",
            real=True)
    for k, which in ((1, "first"), (2, "second"))
    for v, wrt, what in (("n", r"N", "ln N"), ("b", r"b", "ln b"), ("x", r"x", "ln x")))
u_log = _define("u_log", r"\ln x", "1", "the logarithm of the input varied", "sensitivity",
                real=True)
