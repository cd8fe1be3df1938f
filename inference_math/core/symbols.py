"""The one registry of every symbol used by the book's derivations.

Each symbol is created exactly once, with its SymPy assumptions, a LaTeX name, a unit and a
meaning. Derivations import symbols from here and never call ``sp.Symbol`` themselves: two
symbols with the same name but different assumptions are different objects to SymPy, so a
second definition would silently break every identity that mixes them.

The notation chapter of the book is generated from :data:`REGISTRY`. The later chapters'
symbols are defined in :mod:`.symbols_later` and re-exported here, the registry's machinery is
:mod:`.symbol_registry`; :mod:`.names` lists every name without SymPy.
"""

from __future__ import annotations

from .symbol_registry import POS as _POS
from .symbol_registry import REGISTRY as REGISTRY
from .symbol_registry import SymbolInfo as SymbolInfo
from .symbol_registry import by_name as by_name
from .symbol_registry import define as _define
from .symbol_registry import info as info

# --- model --------------------------------------------------------------------------------
n_param = _define("n_param", r"N_{\mathrm{param}}", "parameters",
                  "parameters of the model (read from memory once per forward pass)", "model", **_POS)
p = _define("p", "p", "bytes/parameter", "bytes per weight (2 for 16-bit, 1 for 8-bit)",
            "model", **_POS)
n_layers = _define("n_layers", r"n_{\mathrm{layers}}", "layers",
                   "number of transformer layers", "model", **_POS)
d_model = _define("d_model", r"d_{\mathrm{model}}", "elements", "residual stream width",
                  "model", **_POS)
d_ff = _define("d_ff", r"d_{\mathrm{ff}}", "elements", "feed-forward width of one expert",
               "model", **_POS)
n_ff_in = _define("n_ff_in", r"m_{\mathrm{in}}", "matrices",
                  (r"matrices from $d_{\mathrm{model}}$ to $d_{\mathrm{ff}}$ in one expert "
                   "(2 for SwiGLU)"), "model", **_POS)
n_ff_out = _define("n_ff_out", r"m_{\mathrm{out}}", "matrices",
                   r"matrices from $d_{\mathrm{ff}}$ back to $d_{\mathrm{model}}$ in one expert",
                   "model", **_POS)
n_q = _define("n_q", r"n_{q}", "heads", "query heads per layer", "model", **_POS)
g = _define("g", "g", "heads", "query heads per key-value head (GQA group size)", "model", **_POS)
d_head = _define("d_head", r"d_{\mathrm{head}}", "elements", "width of one attention head",
                 "model", **_POS)
p_act = _define("p_act", r"p_{\mathrm{act}}", "bytes/element",
                "bytes per activation and KV-cache element", "model", **_POS)
kv_bytes = _define("kv_bytes", r"M_{\mathrm{KV}}", "bytes/token",
                   "KV-cache bytes stored per token of context", "model", **_POS)
vocab = _define("vocab", r"n_{\mathrm{vocab}}", "tokens", "vocabulary size", "model", **_POS)
c_kv = _define("c_kv", r"c_{\mathrm{kv}}", "elements",
               "MLA key-value compression width", "model", **_POS)
c_q = _define("c_q", r"c_{q}", "elements", "MLA query compression width", "model", **_POS)
n_experts = _define("n_experts", r"n_{\mathrm{expert}}", "experts",
                    "feed-forward experts per layer (1 for a dense model)", "moe", **_POS)
n_active = _define("n_active", r"n_{\mathrm{active}}", "experts",
                   "experts each token is routed to", "moe", **_POS)
s = _define("s", "s", "1", r"sparsity factor $n_{\mathrm{expert}}/n_{\mathrm{active}}$",
            "moe", **_POS)
n_attn = _define("n_attn", r"N_{\mathrm{attn}}", "parameters",
                 "attention parameters, all layers", "moe", **_POS)
n_ff = _define("n_ff", r"N_{\mathrm{ff}}", "parameters",
               "feed-forward parameters, all layers and all experts", "moe", **_POS)
n_unembed = _define("n_unembed", r"N_{\mathrm{unembed}}", "parameters",
                    "embedding and unembedding parameters", "moe", **_POS)
n_active_param = _define("n_active_param", r"N_{\mathrm{active}}", "parameters",
                         "parameters one token multiplies by (eq. 21)", "moe", **_POS)
n_read = _define("n_read", r"N_{\mathrm{read}}", "parameters",
                 "expected parameters read from memory in one forward pass (eq. 22)", "moe", **_POS)
b_half = _define("b_half", r"b_{1/2}", "sequences",
                 "batch at which half of the experts are read, in expectation", "moe", **_POS)

# --- hardware -----------------------------------------------------------------------------
flops = _define("flops", "C", "FLOP/s",
                ("arithmetic throughput of one GPU (its peak, or the cap the chapter "
                 "names)"), "hardware", **_POS)
hbm_bw = _define("hbm_bw", "B", "bytes/s",
                 ("memory (HBM) bandwidth of one GPU (its peak, or the cap the chapter "
                  "names)"), "hardware", **_POS)
t_hop = _define("t_hop", r"t_{\mathrm{hop}}", "s",
                "latency of one hop of a ring collective", "hardware", **_POS)
t_base = _define("t_base", r"t_{\mathrm{base}}", "s",
                 "fixed latency of one all-reduce, whatever its size (reference code: 6 µs)",
                 "hardware", **_POS)
price = _define("price", r"P_{\mathrm{GPU}}", "$/hour", "rental price of one GPU", "hardware",
                **_POS)

# --- serving ------------------------------------------------------------------------------
b = _define("b", "b", "sequences", "batch size: requests decoded together", "serving", **_POS)
n_gpu = _define("n_gpu", r"N_{\mathrm{GPU}}", "GPUs", "GPUs in one model instance", "serving",
                **_POS)
n_reduce = _define("n_reduce", r"n_{\mathrm{reduce}}", "all-reduces",
                   "sequential all-reduces per layer", "serving", **_POS)
t_reduce = _define("t_reduce", r"t_{\mathrm{reduce}}", "s", "latency of one all-reduce",
                   "serving", **_POS)
t_token = _define("t_token", r"t_{\mathrm{token}}", "s",
                  "token latency: time of one decoding step", "serving", **_POS)
gpu_s = _define("gpu_s", r"c_{\mathrm{token}}", "GPU·s/token",
                "GPU-seconds spent per generated token", "serving", **_POS)
b_star = _define("b_star", r"b^{*}", "sequences",
                 "critical batch: memory time equals arithmetic time", "serving", **_POS)
n_gpu_star = _define("n_gpu_star", r"N_{\mathrm{GPU}}^{*}", "GPUs",
                     "instance size of minimum token latency", "serving", **_POS)
t_min = _define("t_min", r"t_{\min}", "s", "minimum token latency over instance sizes (eq. 14)",
                "serving", **_POS)
cost_ratio = _define("cost_ratio", r"\rho_{\mathrm{cost}}", "1",
                     "cost per token at minimum latency over the arithmetic floor 2N/C",
                     "serving", **_POS)
k_depth = _define("k_depth", r"k_{L}", "layers per parameter^(1/4)",
                  r"depth constant of the aspect-ratio law $n_{\mathrm{layers}} = k_L N^{1/4}$",
                  "scaling", **_POS)
k_width = _define("k_width", r"k_{d}", "parameters",
                  r"shape constant of $N = k_d\, d_{\mathrm{model}}^2\, n_{\mathrm{layers}}$",
                  "scaling", **_POS)
k_lat = _define("k_lat", r"K", "s", "proportionality constant of a scaling law", "scaling", **_POS)
t_prompt = _define("t_prompt", r"T_{\mathrm{in}}", "tokens", "prompt tokens per request (prefilled)",
                   "serving", **_POS)
t_output = _define("t_output", r"T_{\mathrm{out}}", "tokens", "generated tokens per request (decoded)",
                   "serving", **_POS)
n_prefix = _define("n_prefix", r"T_{\mathrm{cached}}", "tokens",
                   "prompt tokens whose KV cache is reused from an earlier request", "serving", **_POS)
server_ratio = _define("server_ratio", r"\frac{N_{\mathrm{prefill}}}{N_{\mathrm{decode}}}", "1",
                       "chips serving prefill per chip serving decode, at balance", "serving", **_POS)
prefill_fraction = _define("prefill_fraction", r"f_{\mathrm{prefill}}", "1",
                           "fraction of a prompt's prefill compute that must still be done", "serving",
                           **_POS)
accept = _define("accept", r"\alpha", "1",
                 "probability that the target model accepts one drafted token", "serving", **_POS)
gamma = _define("gamma", r"\gamma", "tokens", "tokens drafted per speculative step", "serving", **_POS)
tokens_per_step = _define("tokens_per_step", r"E[n_{\mathrm{tok}}]", "tokens",
                          "expected tokens produced per target forward pass", "serving", **_POS)
surp_target = _define("surp_target", r"s_{P}", "nats",
                      "surprisal -log P(z) of a drafted token under the target model (minus the "
                      "log-probability an API reports)", "serving", **_POS)
surp_draft = _define("surp_draft", r"s_{Q}", "nats",
                     "surprisal -log Q(z) of a drafted token under the draft model", "serving",
                     **_POS)
tv_dist = _define("tv_dist", r"d_{\mathrm{TV}}", "1",
                  "total-variation distance between the target's and the drafter's next-token "
                  "distributions, half the sum of |P(z) - Q(z)|", "serving", **_POS)
accept_token = _define("accept_token", r"a", "1",
                       "probability that the target accepts one particular drafted token",
                       "serving", **_POS)
n_alpha = _define("n_alpha", r"n_{\alpha}", "samples",
                  "drafted tokens whose log-probabilities are averaged to estimate alpha",
                  "serving", **_POS)
alpha_se = _define("alpha_se", r"\sigma_{\hat{\alpha}}", "1",
                   "largest standard error of the estimated acceptance rate", "serving", **_POS)
z_conf = _define("z_conf", r"k_{\mathrm{conf}}", "1",
                 "standard-normal quantile of a confidence interval", "serving", **_POS)
alpha_eps = _define("alpha_eps", r"h_{\alpha}", "1",
                    "half-width of a confidence interval for the acceptance rate", "serving",
                    **_POS)
w_xfer = _define("w_xfer", r"W_{\mathrm{xfer}}", "bytes/s",
                 "bandwidth over which one prefill chip sends its share of a KV cache to decode",
                 "serving", **_POS)
r_xfer = _define("r_xfer", r"r_{\mathrm{xfer}}", "1",
                 "KV-cache transfer time over prefill time for one prompt (disaggregation)",
                 "serving", **_POS)
elasticity = _define("elasticity", r"\varepsilon", "1",
                     "elasticity: d log(minimum latency) / d log(input)", "scaling", real=True)

# --- decode roofline and arithmetic intensity (scaling book) -------------------------------
# (section owned by inference_math/intensity.py)
intensity = _define("intensity", r"\mathcal{I}", "FLOP/byte",
                    "arithmetic intensity: FLOP done per byte moved between HBM and the compute units",
                    "intensity", **_POS)
seq_kv = _define("seq_kv", "S", "tokens",
                 (r"KV-cache entries each sequence attends to and stores, as the scaling book counts "
                  r"context ($\ell$ in the paper's chapters)"),
                 "intensity", **_POS)
seq_q = _define("seq_q", "T", "tokens",
                "query tokens per sequence in one forward pass (the prompt in prefill, 1 in decode)",
                "intensity", **_POS)
seq_q_star = _define("seq_q_star", r"T^{*}", "tokens",
                     "shortest prompt for which prefill attention is compute bound", "intensity",
                     **_POS)
b_star_exact = _define("b_star_exact", r"b^{*}_{\mathrm{exact}}", "sequences",
                       "smallest batch at which one decode matmul is compute bound, activation "
                       "traffic included", "intensity", **_POS)
t_step_min = _define("t_step_min", r"t_{\mathrm{step}}^{\min}", "s",
                     "decode step time with every weight and KV byte read once at full bandwidth "
                     "(the memory-bound lower bound)", "intensity", **_POS)
tok_rate = _define("tok_rate", r"R_{\mathrm{tok}}", "tokens/s",
                   "tokens an instance generates per second (b per step)", "intensity", **_POS)
tok_rate_mem = _define("tok_rate_mem", r"R_{\mathrm{tok}}^{\mathrm{mem}}", "tokens/s",
                       "ceiling of the memory-bound throughput as the batch grows", "intensity",
                       **_POS)
tok_rate_max = _define("tok_rate_max", r"R_{\mathrm{tok}}^{\max}", "tokens/s",
                       "ceiling of the throughput under the general step time "
                       "(reached at $b \\ge b^*$)",
                       "intensity", **_POS)
b_half_tok = _define("b_half_tok", r"b_{1/2}^{\mathrm{tok}}", "sequences",
                     "batch at which the memory-bound throughput reaches half its ceiling",
                     "intensity", **_POS)

# --- KV-cache economics (scaling book, Pope et al.) ----------------------------------------
# (section owned by inference_math/kv_cache.py)
n_kv = _define("n_kv", r"n_{\mathrm{kv}}", "heads",
               "key-value heads per layer (the scaling book's K; n_q/g)", "kv", **_POS)
n_emb = _define("n_emb", r"m_{\mathrm{emb}}", "matrices",
                "vocabulary matrices: 1 if input and output embeddings are tied, 2 if not",
                "kv", **_POS)
kv_seq = _define("kv_seq", r"M_{\mathrm{seq}}", "bytes/sequence",
                 "KV-cache bytes of one sequence at its full context", "kv", **_POS)
hbm_cap = _define("hbm_cap", r"M_{\mathrm{HBM}}", "bytes", "HBM capacity of one chip", "kv",
                  **_POS)
b_max = _define("b_max", r"b_{\max}", "sequences",
                "largest batch whose KV caches fit in HBM beside the weights", "kv", **_POS)
kv_ratio = _define("kv_ratio", r"\rho_{\mathrm{KV}}", "1",
                   r"KV-cache bytes of multi-head attention over those with $n_{\mathrm{kv}}$ heads", "kv",
                   **_POS)
b_star_moe = _define("b_star_moe", r"b^{*}_{\mathrm{MoE}}", "sequences",
                     "critical batch of an MoE feed-forward block whose experts are all read",
                     "kv", **_POS)
n_tok_eq = _define("n_tok_eq", r"(bS)_{\mathrm{eq}}", "tokens",
                   "cached tokens of a batch (b times S) whose KV bytes equal the weight bytes",
                   "kv", **_POS)

# --- sharding for decode (scaling book, Pope et al.) ---------------------------------------
# (section owned by inference_math/sharding.py)
ici_bw = _define("ici_bw", r"W_{\mathrm{ICI}}", "bytes/s",
                 "inter-chip (ICI) bandwidth a collective is charged against", "sharding", **_POS)
net_bw = _define("net_bw", r"W_{\mathrm{net}}", "elements/s",
                 "network bandwidth counted in elements, as in the notes on Pope et al.",
                 "sharding", **_POS)
beta_bw = _define("beta_bw", r"\beta", "1", r"HBM over ICI bandwidth, $B/W_{\mathrm{ICI}}$",
                  "sharding", **_POS)
y_model = _define("y_model", "Y", "chips",
                  "ways of model parallelism in decode (chips along the mesh axis Y)", "sharding",
                  **_POS)
y_max = _define("y_max", r"Y_{\max}", "chips",
                "most ways of model parallelism before ICI time exceeds weight-load time",
                "sharding", **_POS)
t_hbm = _define("t_hbm", r"T_{\mathrm{HBM}}", "s",
                (r"time to read one chip's share of a $d_{\mathrm{model}} \times "
                 r"d_{\mathrm{ff}}$ weight matrix from HBM"),
                "sharding", **_POS)
t_ici = _define("t_ici", r"T_{\mathrm{ICI}}", "s",
                (r"time to move the $b \times d_{\mathrm{model}}$ activations of one "
                 r"matmul over ICI"), "sharding",
                **_POS)
x_2d = _define("x_2d", "X", "chips", "2-D layout: chips along the axis that splits d_model",
               "sharding", **_POS)
yz_2d = _define("yz_2d", "YZ", "chips", "2-D layout: chips along the axes that split d_ff",
                "sharding", **_POS)
x_star = _define("x_star", r"X^{*}", "chips", "X of least 2-D communication time", "sharding",
                 **_POS)
yz_star = _define("yz_star", r"(YZ)^{*}", "chips", "YZ of least 2-D communication time",
                  "sharding", **_POS)
t_1d = _define("t_1d", r"T_{\mathrm{1D}}", "s",
               "MLP communication time per layer, 1-D weight-stationary (scaling-book accounting)",
               "sharding", **_POS)
t_2d = _define("t_2d", r"T_{\mathrm{2D}}", "s",
               "MLP communication time per layer, 2-D weight-stationary (scaling-book accounting)",
               "sharding", **_POS)
t_2d_star = _define("t_2d_star", r"T_{\mathrm{2D}}^{*}", "s",
                    "least 2-D communication time over X (scaling-book accounting)", "sharding",
                    **_POS)
t_1d_el = _define("t_1d_el", r"T_{\mathrm{1D}}^{\mathrm{el}}", "s",
                  "MLP communication time per layer, 1-D weight-stationary (element accounting)",
                  "sharding", **_POS)
t_2d_el = _define("t_2d_el", r"T_{\mathrm{2D}}^{\mathrm{el}}", "s",
                  "MLP communication time per layer, 2-D weight-stationary (element accounting)",
                  "sharding", **_POS)
t_2d_el_star = _define("t_2d_el_star", r"T_{\mathrm{2D}}^{\mathrm{el}*}", "s",
                       "least 2-D communication time over X (element accounting)", "sharding",
                       **_POS)
n_cross = _define("n_cross", r"N_{\times}", "chips",
                  "chips above which 2-D weight-stationary communicates less than 1-D",
                  "sharding", **_POS)
n_cross_bytes = _define("n_cross_bytes", r"N_{\times}^{\mathrm{bytes}}", "chips",
                        "the 1-D/2-D crossover in the scaling-book accounting", "sharding", **_POS)
n_cross_el = _define("n_cross_el", r"N_{\times}^{\mathrm{el}}", "chips",
                     "the 1-D/2-D crossover in the element accounting of the notes on Pope et al.",
                     "sharding", **_POS)
k_1d = _define("k_1d", r"k_{\mathrm{1D}}", "axes",
               "torus axes whose links a 1-D collective is credited with", "sharding", **_POS)
k_2d = _define("k_2d", r"k_{\mathrm{2D}}", "axes",
               (r"torus axes whose links the 2-D $d_{\mathrm{model}}$ collectives are "
                r"credited with"), "sharding",
               **_POS)
n_min = _define("n_min", r"N_{\mathrm{GPU}}^{\min}", "chips",
                "fewest chips whose HBM holds the weights", "sharding", **_POS)
msg_bytes = _define("msg_bytes", r"M_{\mathrm{msg}}", "bytes",
                    "bytes of the tensor a collective moves, summed over its shards", "sharding",
                    **_POS)
tau_hop = _define("tau_hop", r"\tau_{\mathrm{hop}}", "s",
                  "time of one hop of a collective: fixed latency or transfer, whichever is longer",
                  "sharding", **_POS)
t_coll = _define("t_coll", r"T_{\mathrm{coll}}", "s", "time of one ring all-gather", "sharding",
                 **_POS)
buf_lat = _define("buf_lat", r"M_{\mathrm{lat}}", "bytes",
                  "largest message for which a collective is latency bound", "sharding", **_POS)
y_lat = _define("y_lat", r"Y_{\mathrm{lat}}", "chips",
                "ways of model parallelism beyond which the activation collectives are latency "
                "bound", "sharding", **_POS)
n_wg = _define("n_wg", r"N_{\mathrm{WG}}", "chips",
               "weight-gathered layout: chips over which each weight shard is all-gathered "
               "(X, XY or XYZ of the torus)", "sharding", **_POS)
n_wg_next = _define("n_wg_next", r"N_{\mathrm{WG}}'", "chips",
                    "gather group of a second weight-gathered layout, compared with N_WG",
                    "sharding", **_POS)
t_wg_el = _define("t_wg_el", r"T_{\mathrm{WG}}^{\mathrm{el}}", "s",
                  "MLP communication time per layer, weights all-gathered over N_WG of the chips "
                  "(element accounting)", "sharding", **_POS)
t_xyz_el = _define("t_xyz_el", r"T_{\mathrm{XYZ}}^{\mathrm{el}}", "s",
                   "MLP communication time per layer, weights all-gathered over every chip "
                   "(XYZ-weight-gathered, element accounting)", "sharding", **_POS)
n_wg_star = _define("n_wg_star", r"N_{\mathrm{WG}}^{*}", "chips",
                    "gather group of least weight-gathered communication time", "sharding",
                    **_POS)
t_wg_el_star = _define("t_wg_el_star", r"T_{\mathrm{WG}}^{\mathrm{el}*}", "s",
                       "least weight-gathered communication time over the gather group",
                       "sharding", **_POS)
tok_2d_wg = _define("tok_2d_wg", r"(bT)_{\mathrm{2D}\to\mathrm{WG}}", "tokens",
                    "tokens per step above which weight-gathered over N_WG chips communicates "
                    "less than the best 2-D weight-stationary split", "sharding", **_POS)
tok_wg_wg = _define("tok_wg_wg", r"(bT)_{N\to N'}", "tokens",
                    "tokens per step above which gathering over N_WG' chips communicates less "
                    "than over N_WG < N_WG'", "sharding", **_POS)
tok_wg_xyz = _define("tok_wg_xyz", r"(bT)_{N\to\mathrm{XYZ}}", "tokens",
                     "tokens per step above which XYZ-weight-gathered communicates less than "
                     "gathering over N_WG chips", "sharding", **_POS)
tok_2d_wg_star = _define("tok_2d_wg_star", r"(bT)_{\mathrm{2D}\to\mathrm{WG}^{*}}", "tokens",
                         "tokens per step at which the best weight-gathered group and the best "
                         "2-D weight-stationary split communicate equally", "sharding", **_POS)
y_pre = _define("y_pre", r"Y_{\mathrm{pre}}", "chips",
                "most ways of model parallelism before a compute-bound prefill becomes ICI bound",
                "sharding", **_POS)
alpha_ici = _define("alpha_ici", r"\alpha_{\mathrm{ICI}}", "FLOP/byte",
                    "arithmetic rate over ICI bandwidth, C/W_ICI", "sharding", **_POS)

# --- dense-model economics (Tensor Economics) ---------------------------------------------
# (section owned by inference_math/dense_economics.py)
n_norm = _define("n_norm", r"N_{\mathrm{norm}}", "parameters",
                 "RMSNorm weights: two vectors per layer and the final one", "dense", **_POS)
f_prefill = _define("f_prefill", r"F_{\mathrm{prefill}}", "FLOP",
                    "FLOPs of the prefill forward pass of one sequence", "dense", **_POS)
f_decode = _define("f_decode", r"F_{\mathrm{decode}}", "FLOP",
                   "FLOPs of one decode step of one sequence at context S", "dense", **_POS)
seq_attn = _define("seq_attn", r"S_{\mathrm{attn}}", "tokens",
                   "prompt length at which a layer's attention FLOPs equal its MLP FLOPs", "dense",
                   **_POS)
t_tp = _define("t_tp", r"t_{\mathrm{TP}}", "s",
               "transfer time of the tensor-parallel all-reduces of one token through all layers",
               "dense", **_POS)
t_prefill = _define("t_prefill", r"t_{\mathrm{prefill}}", "s",
                    "time to prefill the prompts of a whole batch", "dense", **_POS)
t_decode = _define("t_decode", r"t_{\mathrm{decode}}", "s",
                   "time of all decode steps of a batch", "dense", **_POS)
t_batch = _define("t_batch", r"t_{\mathrm{batch}}", "s",
                  "wall time of one batch: prefill and every decode step", "dense", **_POS)
tok_rate_inf = _define("tok_rate_inf", r"R_{\mathrm{tok}}^{\infty}", "tokens/s",
                       "large-batch limit of the throughput when every prompt is prefilled",
                       "dense", **_POS)
b_star_kv = _define("b_star_kv", r"b^{*}_{\mathrm{KV}}", "sequences",
                    "batch at which a decode step at context S turns compute bound, KV reads and "
                    "attention FLOPs included", "dense", **_POS)
seq_crit = _define("seq_crit", r"S_{\mathrm{crit}}", "tokens",
                   "context beyond which no batch makes a decode step compute bound", "dense",
                   **_POS)
gamma_in = _define("gamma_in", r"\gamma_{\mathrm{in}}", "1",
                   "price of an input token as a fraction of the price of an output token",
                   "dense", **_POS)
beta_out = _define("beta_out", r"\beta_{\mathrm{out}}", "$/token",
                   "price of an output token at which the tokens of a batch pay for its GPU time",
                   "dense", **_POS)
tok_rate_be = _define("tok_rate_be", r"R_{\mathrm{tok}}^{\mathrm{be}}", "tokens/s",
                      "output tokens per second an instance must deliver for a price to cover its "
                      "rent", "dense", **_POS)
price_be = _define("price_be", r"P_{\mathrm{GPU}}^{\mathrm{be}}", "$/hour",
                   "highest GPU rental price a token price covers at a given throughput", "dense",
                   **_POS)
beta_floor = _define("beta_floor", r"\beta_{\mathrm{out}}^{\infty}", "$/token",
                     "large-batch limit of the output-token price", "dense", **_POS)

# --- DeepSeek-V3 and MoE serving (Tensor Economics) ---------------------------------------
# (section owned by inference_math/deepseek_serving.py)
d_rope = _define("d_rope", r"d_{h}^{R}", "elements",
                 "per-head width of MLA's decoupled rotary (RoPE) query and key", "deepseek", **_POS)
d_ff_dense = _define("d_ff_dense", r"d_{\mathrm{ff}}^{\mathrm{dense}}", "elements",
                     "feed-forward width of a dense (non-MoE) layer", "deepseek", **_POS)
n_dense = _define("n_dense", r"n_{\mathrm{dense}}", "layers",
                  "dense layers ahead of the MoE layers", "deepseek", **_POS)
n_shared = _define("n_shared", r"n_{\mathrm{shared}}", "experts",
                   "shared experts that every token passes through", "deepseek", **_POS)
n_extra = _define("n_extra", r"n_{\mathrm{redundant}}", "experts",
                  "redundant copies of routed experts per layer, for load balancing", "deepseek",
                  **_POS)
n_busy = _define("n_busy", r"E[n_{\mathrm{busy}}]", "experts",
                 "expected routed experts of a layer that at least one token of the batch uses",
                 "deepseek", **_POS)
w_mla = _define("w_mla", r"M_{\mathrm{MLA}}", "bytes/layer",
                "bytes of the MLA weights of one layer", "deepseek", **_POS)
w_expert = _define("w_expert", r"M_{\mathrm{expert}}", "bytes", "bytes of one expert's weights",
                   "deepseek", **_POS)
w_ep_gpu = _define("w_ep_gpu", r"M_{\mathrm{EP}}", "bytes",
                   "expert and router bytes held by one GPU of an expert-parallel group",
                   "deepseek", **_POS)
flop_vanilla = _define("flop_vanilla", r"F_{\mathrm{MLA}}^{\mathrm{vanilla}}", "FLOP",
                       "decode FLOPs of one token in one MLA layer, caches up-projected",
                       "deepseek", **_POS)
flop_absorbed = _define("flop_absorbed", r"F_{\mathrm{MLA}}^{\mathrm{absorbed}}", "FLOP",
                        "decode FLOPs of one token in one MLA layer, up-projections absorbed",
                        "deepseek", **_POS)
seq_absorb = _define("seq_absorb", r"S_{\mathrm{absorb}}", "tokens",
                     "context beyond which absorbed MLA needs fewer decode FLOPs", "deepseek",
                     **_POS)
p_dispatch = _define("p_dispatch", r"p_{\mathrm{dispatch}}", "bytes/element",
                     "bytes per element of the activations dispatched to the experts",
                     "deepseek", **_POS)
p_combine = _define("p_combine", r"p_{\mathrm{combine}}", "bytes/element",
                    "bytes per element of the expert outputs combined back", "deepseek", **_POS)
a2a_bytes = _define("a2a_bytes", r"M_{\mathrm{a2a}}", "bytes",
                    "all-to-all bytes through one GPU's link in one forward pass", "deepseek",
                    **_POS)
beta_eb = _define("beta_eb", r"\beta_{\mathrm{eb}}", "1",
                  "expert balancedness: mean over maximum routed load per GPU (1 = balanced)",
                  "deepseek", **_POS)
imbalance = _define("imbalance", r"\rho_{\mathrm{eb}}", "1",
                    "load of the GPU holding the only shared expert over that of the others",
                    "deepseek", **_POS)
n_nodes = _define("n_nodes", r"n_{\mathrm{nodes}}", "nodes", "nodes an expert-parallel group spans",
                  "deepseek", **_POS)
bw_inter = _define("bw_inter", r"W_{\mathrm{inter}}", "bytes/s",
                   "all-to-all bandwidth of one GPU to other nodes", "deepseek", **_POS)
bw_intra = _define("bw_intra", r"W_{\mathrm{intra}}", "bytes/s",
                   "all-to-all bandwidth of one GPU within its node", "deepseek", **_POS)
t_comm = _define("t_comm", r"T_{\mathrm{comm}}", "s", "all-to-all time of one forward pass",
                 "deepseek", **_POS)
t_fixed = _define("t_fixed", r"T_{0}", "s",
                  "batch-independent time of the compute blocks of one pass (weight reads)",
                  "deepseek", **_POS)
tau_seq = _define("tau_seq", r"\tau_{\mathrm{seq}}", "s/sequence",
                  "time of the compute blocks per sequence of the batch", "deepseek", **_POS)
kappa_seq = _define("kappa_seq", r"\tau_{\mathrm{comm}}", "s/sequence",
                    "all-to-all time per sequence of the batch", "deepseek", **_POS)
b_tbo = _define("b_tbo", r"b_{\mathrm{TBO}}", "sequences",
                "batch above which two-batch overlap beats serial execution", "deepseek", **_POS)
b_tbo_peak = _define("b_tbo_peak", r"b_{\mathrm{TBO}}^{\ast}", "sequences",
                     "batch at which two-batch overlap gains most (its two arguments meet)",
                     "deepseek", **_POS)
tbo_gain = _define("tbo_gain", r"\sigma_{\mathrm{TBO}}", "1",
                   "largest speed-up of two-batch overlap over serial execution", "deepseek",
                   **_POS)
tok_rate_gpu = _define("tok_rate_gpu", r"R_{\mathrm{tok}}^{\mathrm{GPU}}", "tokens/s",
                       "tokens one GPU of a deployment generates per second", "deepseek", **_POS)
tok_rate_req = _define("tok_rate_req", r"R_{\mathrm{tok}}^{\mathrm{req}}", "tokens/s",
                       "tokens per second one request receives", "deepseek", **_POS)
b_gpu = _define("b_gpu", r"b_{\mathrm{GPU}}", "sequences",
                "sequences decoded per GPU (per data-parallel attention rank)", "deepseek", **_POS)
tokens_day = _define("tokens_day", r"N_{\mathrm{tok}}^{\mathrm{day}}", "tokens/day",
                     "tokens a deployment generates per day", "deepseek", **_POS)
usd_per_mtok = _define("usd_per_mtok", r"c_{\mathrm{Mtok}}^{\mathrm{decode}}", "$/million tokens",
                       "GPU cost of a million decoded tokens", "deepseek", **_POS)

# --- embeddings, RL rollouts and LoRA (Tensor Economics) ----------------------------------
# (section owned by inference_math/rollouts.py)
flops_emb = _define("flops_emb", r"F_{\mathrm{emb}}", "FLOP",
                    "FLOPs of one embedding forward pass over S tokens (a prefill without LM head)",
                    "rollouts", **_POS)
t_emb = _define("t_emb", r"t_{\mathrm{emb}}", "s",
                "time of one embedding forward pass over a batch of b sequences", "rollouts", **_POS)
emb_rate = _define("emb_rate", r"R_{\mathrm{emb}}", "embeddings/s",
                   "embeddings one GPU produces per second", "rollouts", **_POS)
seq_emb_star = _define("seq_emb_star", r"S^{*}_{\mathrm{emb}}", "tokens",
                       "shortest input whose embedding pass ($b = 1$) is compute bound", "rollouts",
                       **_POS)
util = _define("util", "u", "1", "utilisation: fraction of the rented time spent on paid work",
               "rollouts", **_POS)
flop_usd = _define("flop_usd", r"\Phi", "FLOP/$", "FLOPs one dollar of GPU rental buys",
                   "rollouts", **_POS)
usd_mtok_emb = _define("usd_mtok_emb", r"c_{\mathrm{Mtok}}^{\mathrm{emb}}", "$/million tokens",
                       "GPU cost of embedding a million input tokens", "rollouts", **_POS)
lora_rank = _define("lora_rank", "r", "1", "rank of a LoRA adapter", "rollouts", **_POS)
d_in = _define("d_in", r"d_{\mathrm{in}}", "elements", "input width of an adapted weight matrix",
               "rollouts", **_POS)
d_out = _define("d_out", r"d_{\mathrm{out}}", "elements",
                "output width of an adapted weight matrix", "rollouts", **_POS)
lora_frac = _define("lora_frac", r"f_{\mathrm{LoRA}}", "1",
                    "parameters of a LoRA adapter over those of the matrix it adapts", "rollouts",
                    **_POS)
n_lora = _define("n_lora", r"N_{\mathrm{LoRA}}", "parameters",
                 "parameters of one LoRA adapter over every adapted matrix of a model", "rollouts",
                 **_POS)
n_train_tok = _define("n_train_tok", r"n_{\mathrm{tok}}", "tokens",
                      "tokens of one training batch", "rollouts", **_POS)
rho_train = _define("rho_train", r"\rho_{\mathrm{train}}", "1",
                    "FLOPs of a LoRA training step over those of a full fine-tuning step",
                    "rollouts", **_POS)
n_levels = _define("n_levels", r"N_{\mathrm{levels}}", "values",
                   "distinct values a rollout's reward can take", "rollouts", **_POS)
h_reward = _define("h_reward", r"H_{\mathrm{reward}}", "bits",
                   "entropy of one rollout's reward (equally likely values)", "rollouts", **_POS)
ess = _define("ess", r"\mathrm{ESS}", "1",
              "normalised effective sample size of importance-weighted samples", "rollouts", **_POS)
n_samples = _define("n_samples", r"n_{\mathrm{samp}}", "samples",
                    "samples (rollouts) of an importance-weighted batch", "rollouts", **_POS)
w_sum = _define("w_sum", r"\Sigma_{w}", "1", "sum of the importance weights of a batch",
                "rollouts", **_POS)
w_sq_sum = _define("w_sq_sum", r"\Sigma_{w^{2}}", "1",
                   "sum of the squared importance weights of a batch", "rollouts", **_POS)
sigma_lw = _define("sigma_lw", r"\sigma_{\log w}", "1",
                   "standard deviation of the log importance weight", "rollouts", **_POS)
grpo_group = _define("grpo_group", "G", "rollouts", "rollouts GRPO samples per prompt",
                     "rollouts", **_POS)
n_adapt = _define("n_adapt", r"n_{\mathrm{adapt}}", "adapters",
                  "distinct LoRA adapters whose requests share one batch", "rollouts", **_POS)
b_adapt = _define("b_adapt", r"b_{\mathrm{adapt}}", "sequences",
                  "concurrent sequences each adapter contributes to the batch", "rollouts", **_POS)
n_adapt_star = _define("n_adapt_star", r"n^{*}_{\mathrm{adapt}}", "adapters",
                       "adapters at which a multi-LoRA decode step turns compute bound",
                       "rollouts", **_POS)
n_adapt_max = _define("n_adapt_max", r"n^{\max}_{\mathrm{adapt}}", "adapters",
                      "most adapters whose weights and KV caches fit in HBM", "rollouts", **_POS)
lora_tput = _define("lora_tput", r"\eta_{\mathrm{LoRA}}", "1",
                    "throughput of a multi-LoRA batch over that of the base model at the same batch",
                    "rollouts", **_POS)


# --- the full model of Erdil (2025), section 3 --------------------------------------------
# (section owned by inference_math/collectives.py, full_model.py, speculative.py, search.py)
n_pp = _define("n_pp", r"N_{\mathrm{PP}}", "stages",
               "pipeline-parallel degree (continuous, as in the reference code)", "full", **_POS)
n_tp = _define("n_tp", r"N_{\mathrm{TP}}", "GPUs",
               "tensor-parallel degree of one pipeline stage, "
               "$N_{\\mathrm{GPU}}/N_{\\mathrm{PP}}$", "full", **_POS)
n_ep = _define("n_ep", r"N_{\mathrm{EP}}", "GPUs", "expert-parallel degree", "full", **_POS)
n_tp_ff = _define("n_tp_ff", r"N_{\mathrm{TP}}^{\mathrm{ff}}", "GPUs",
                  "tensor-parallel degree of each expert's matrices: max(1, N_TP / N_EP)", "full",
                  **_POS)
n_tp_attn = _define("n_tp_attn", r"N_{\mathrm{TP}}^{\mathrm{attn}}", "GPUs",
                    "GPUs attention runs on within a stage: N_TP / sigma", "full", **_POS)
f_used = _define("f_used", r"f_{\mathrm{used}}", "1",
                 "expected fraction of experts at least one token is routed to (eq. 22)", "full",
                 **_POS)
sigma_attn = _define("sigma_attn", r"\sigma", "1",
                     "attention scale-down: attention runs on N_TP / sigma GPUs of a stage",
                     "full", **_POS)
b_mu = _define("b_mu", r"b_{\mu}", "sequences", "micro-batch: b / N_PP sequences per stage",
               "full", **_POS)
q_len = _define("q_len", "q", "tokens",
                "tokens of each sequence in one forward pass (1 for decoding, gamma to verify)",
                "full", **_POS)
ctx = _define("ctx", r"\ell", "tokens", "context length: tokens already in each sequence's KV cache",
              "full", nonnegative=True, real=True)
mm_m = _define("mm_m", "m", "elements", "rows of a weight matrix (its output width)", "full", **_POS)
mm_k = _define("mm_k", "k", "elements", "columns of a weight matrix (its input width)", "full",
               **_POS)
mm_n = _define("mm_n", "n", "tokens", "tokens multiplied by a weight matrix", "full", **_POS)
tp_rows = _define("tp_rows", r"t_{1}", "GPUs",
                  "GPUs over which a matmul's input activations are replicated (2-D TP)", "full",
                  **_POS)
rw_bytes = _define("rw_bytes", r"M_{\mathrm{rw}}", "bytes",
                   "bytes a sharded matmul reads and writes, summed over its GPUs", "full", **_POS)
n_ranks = _define("n_ranks", r"n_{\mathrm{ranks}}", "GPUs", "GPUs taking part in a collective",
                  "full", **_POS)
n_nodes_c = _define("n_nodes_c", r"n_{\mathrm{nodes}}^{\mathrm{c}}", "nodes", "nodes a collective spans",
                    "full", **_POS)
m_coll = _define("m_coll", r"m_{\mathrm{c}}", "1",
                 "latency multiplier of a collective: 2 for an all-reduce, 1 otherwise", "full",
                 **_POS)
h_coll = _define("h_coll", r"h_{\mathrm{c}}", "1",
                 "bandwidth multiplier of a collective: 1 for an all-reduce, 1/2 otherwise",
                 "full", **_POS)
lat_rank = _define("lat_rank", r"a_{\pi}", "s",
                   "protocol latency per extra rank within a node (NCCL tuning model)", "full",
                   **_POS)
lat_node = _define("lat_node", r"h_{\pi}", "s",
                   "protocol latency per doubling of the nodes (NCCL tuning model)", "full", **_POS)
lat_base = _define("lat_base", r"t_{0,\pi}", "s", "protocol base latency (NCCL tuning model)",
                   "full", nonnegative=True, real=True)
bw_eff = _define("bw_eff", r"f_{\pi}", "1", "fraction of the link bandwidth a protocol reaches",
                 "full", **_POS)
bw_ar_intra = _define("bw_ar_intra", r"W_{\mathrm{AR}}^{\mathrm{intra}}", "bytes/s",
                      "all-reduce bandwidth of one GPU within its node (NVLink)", "full", **_POS)
bw_ar_inter = _define("bw_ar_inter", r"W_{\mathrm{AR}}^{\mathrm{inter}}", "bytes/s",
                      "all-reduce bandwidth of one GPU across nodes (InfiniBand)", "full", **_POS)
t_coll_lat = _define("t_coll_lat", r"t_{\mathrm{lat}}", "s", "latency part of one collective",
                     "full", **_POS)
t_coll_bw = _define("t_coll_bw", r"t_{\mathrm{bw}}", "s", "bandwidth part of one collective",
                    "full", **_POS)
t_collective = _define("t_collective", r"t_{\mathrm{coll}}", "s",
                       "time of one collective with the cheapest protocol", "full", **_POS)
node_size = _define("node_size", r"n_{\mathrm{node}}", "GPUs", "GPUs per node", "full", **_POS)
t_kernel = _define("t_kernel", r"t_{\mathrm{kernel}}", "s", "kernel launch latency", "full",
                   nonnegative=True, real=True)
flops_fwd = _define("flops_fwd", r"F_{\mathrm{fwd}}", "FLOP",
                    "FLOPs of one forward pass of the batch", "full", **_POS)
t_mem = _define("t_mem", r"t_{\mathrm{mem}}", "s", "memory time of one forward pass", "full",
                **_POS)
t_flop = _define("t_flop", r"t_{\mathrm{FLOP}}", "s", "arithmetic time of one forward pass",
                 "full", **_POS)
t_net = _define("t_net", r"t_{\mathrm{net}}", "s", "network time of one forward pass", "full",
                nonnegative=True, real=True)
t_fwd = _define("t_fwd", r"t_{\mathrm{fwd}}", "s", "latency of one forward pass", "full",
                **_POS)
xi_ep = _define("xi_ep", r"\xi_{\mathrm{EP}}", "1",
                "1 if the ranks a token's experts sit on are spread over the nodes of the "
                "expert-parallel group, 0 if they share one node as the reference code has it",
                "full", nonnegative=True, real=True)
t_pipe = _define("t_pipe", r"t_{\mathrm{pipe}}", "s",
                 "time of the pipeline's point-to-point hops in one forward pass", "full",
                 nonnegative=True, real=True)
mem_need = _define("mem_need", r"M_{\mathrm{need}}", "bytes",
                   "HBM an instance needs: weights plus the micro-batch's KV cache", "full", **_POS)
t_target = _define("t_target", r"t_{P}", "s",
                   "latency of one target forward pass verifying gamma tokens", "full", **_POS)
t_draft = _define("t_draft", r"t_{Q}", "s", "latency of one drafter forward pass", "full",
                  **_POS)
t_spec = _define("t_spec", r"t_{\mathrm{spec}}", "s",
                 "mean latency per token with speculative decoding (eq. 46)", "full", **_POS)
r_draft = _define("r_draft", r"r_{PQ}", "1", "target over drafter forward latency, t_P / t_Q", "full",
                  **_POS)
pref_exp = _define("pref_exp", r"\alpha_{\mathrm{u}}", "1",
                   "user-preference exponent: a token at speed $v$ is worth "
                   "$v^{\\alpha_{\\mathrm{u}}}$ (eq. 45)",
                   "full", **_POS)
speed = _define("speed", "v", "tokens/s", "tokens per second per user: 1 / token latency",
                "full", **_POS)
usd_mtok_full = _define("usd_mtok_full", r"c_{\mathrm{Mtok}}", "$/million tokens",
                        "price of a million output tokens at cost", "full", **_POS)

preference = _define("preference", r"U", "(tokens/s)^α_u per $/million tokens",
                     (r"what a customer maximizes: $v^{\alpha_{\mathrm{u}}}$ over price (eq. "
                      r"45)"), "full", **_POS)
usd_mtok_floor = _define("usd_mtok_floor", r"c_{\mathrm{Mtok}}^{\mathrm{KV}}", "$/million tokens",
                         "cost floor of reading the KV cache once per generated token", "full",
                         **_POS)
intensity_attn = _define("intensity_attn", r"I_{\mathrm{attn}}", "FLOP/byte",
                         "arithmetic intensity of attention over the KV cache", "full", **_POS)
t_sweep = _define("t_sweep", r"t_{\mathrm{sweep}}", "s",
                  "time to read a GPU's whole HBM once at the bandwidth it sustains", "full",
                  **_POS)
v_cap = _define("v_cap", r"v_{\mathrm{cap}}", "tokens/s",
                "speed above which a GPU's HBM capacity cannot bind (Erdil 2025, sec. 3.5)",
                "full", **_POS)
eta_bw = _define("eta_bw", r"\eta_{B}", "1", ("fraction of the peak HBM bandwidth a setting sustains "
                  "(a fixed cap, Erdil 2025, sec. 3.5)"),
                 "full", **_POS)


# --- layer mixes: models read from a Hugging Face config.json ------------------------------
# (section owned by inference_math/derivations/layer_mix.py)
_NONNEG = {"nonnegative": True, "integer": True}
n_groups = _define("n_groups", r"n_{\mathrm{groups}}", "groups",
                   "layer groups: runs of layers with the same attention and feed-forward block",
                   "model", positive=True, integer=True)
grp = _define("grp", "i", "1", r"index of a layer group, 1 to $n_{\mathrm{groups}}$", "model", positive=True,
              integer=True)
m_q = _define("m_q", r"m_{q}", "matrices",
              "query-sized input projections of an attention layer: 1, or 2 with an output gate "
              "(Qwen3.5's attn_output_gate)", "model", **_POS)
m_kv = _define("m_kv", r"m_{\mathrm{kv}}", "matrices",
               "key and value projections of an attention layer: 2, or 1 when the values reuse "
               "the keys (Gemma 4's attention_k_eq_v)", "model", **_POS)
d_v = _define("d_v", r"d_{v}", "elements",
              (r"width of one MLA value head ($d_{\mathrm{head}}$ is then the "
               r"position-free query and key width)"),
              "model", **_POS)
n_lk = _define("n_lk", r"n_{\mathrm{lin},k}", "heads", "key heads of a linear-attention layer",
               "model", **_POS)
d_lk = _define("d_lk", r"d_{\mathrm{lin},k}", "elements",
               "width of one key head of a linear-attention layer", "model", **_POS)
n_lv = _define("n_lv", r"n_{\mathrm{lin},v}", "heads",
               "value heads of a linear-attention layer (each keeps a d_lin,k x d_lin,v state)",
               "model", **_POS)
d_lv = _define("d_lv", r"d_{\mathrm{lin},v}", "elements",
               "width of one value head of a linear-attention layer", "model", **_POS)
k_conv = _define("k_conv", r"k_{\mathrm{conv}}", "tokens",
                 "kernel length of the short causal convolution of a linear-attention layer",
                 "model", **_POS)
n_sh = _define("n_sh", r"n_{\mathrm{sh}}", "experts",
                   "shared experts of an MoE layer, which every token passes through (0 if none)",
                   "moe", **_NONNEG)
d_ff_shared = _define("d_ff_shared", r"d_{\mathrm{sh}}", "elements",
                      "feed-forward width of one shared expert", "moe", **_POS)
n_attn_layer = _define("n_attn_layer", r"A", "parameters",
                       "attention (or linear-attention) parameters of one layer", "model", **_POS)
n_ff_layer = _define("n_ff_layer", r"F", "parameters",
                     "feed-forward parameters of one layer: every expert, shared expert and the "
                     "router", "moe", **_POS)
n_ff_layer_active = _define("n_ff_layer_active", r"F_{\mathrm{active}}", "parameters",
                            "feed-forward parameters one token multiplies in one layer", "moe",
                            **_POS)
n_mtp = _define("n_mtp", r"n_{\mathrm{MTP}}", "layers",
                "multi-token-prediction layers (kept out of the model's total, as its card does)",
                "model", **_POS)
n_param_mtp = _define("n_param_mtp", r"N_{\mathrm{MTP}}", "parameters",
                      "parameters of the multi-token-prediction module besides the shared "
                      "embeddings", "model", **_POS)
kv_layer = _define("kv_layer", r"\kappa", "bytes/token",
                   "KV-cache bytes one token leaves in one attention layer (0 in a linear-attention "
                   "layer)", "kv", nonnegative=True, real=True)
window = _define("window", r"W", "tokens",
                 "tokens a layer's cache holds at most: its sliding window or attention chunk "
                 "(infinite for full attention)", "kv", **_POS)
state_layer = _define("state_layer", r"\sigma_{\mathrm{state}}", "bytes/sequence",
                      "constant state of one linear-attention layer per sequence (0 in an "
                      "attention layer)", "kv", nonnegative=True, real=True)
p_state = _define("p_state", r"p_{\mathrm{state}}", "bytes/element",
                  "bytes per element of a linear-attention state", "kv", **_POS)
bits_w = _define("bits_w", r"b_{w}", "bits/parameter", "bits per unquantized weight", "model",
                 **_POS)
bits_q = _define("bits_q", r"b_{q}", "bits/parameter",
                 "bits per quantized weight, its share of the block scale included", "model",
                 **_POS)
bits_elem = _define("bits_elem", r"b_{\mathrm{elem}}", "bits/parameter",
                    "bits of one element of a block-quantized weight", "model", **_POS)
bits_scale = _define("bits_scale", r"b_{\mathrm{scale}}", "bits/block",
                     "bits of the scale each block of a quantized weight stores", "model", **_POS)
block_elems = _define("block_elems", r"n_{\mathrm{block}}", "parameters",
                      "weights sharing one scale in a block-quantized format", "model", **_POS)
n_quant = _define("n_quant", r"N_{q}", "parameters", "parameters stored in the quantized format",
                  "model", nonnegative=True, real=True)
weight_mem = _define("weight_mem", r"M_{w}", "bytes", "bytes of the model's weights", "model",
                     **_POS)


# --- the book's physical rules (section owned by inference_math/fullmodel/physical_rules.py) ---
kv_copies = _define("kv_copies", r"r_{\mathrm{KV}}", "1",
                    "copies of each KV-cache entry an attention group holds: its GPUs per KV head "
                    "(all of them for MLA's one latent), at least 1", "full", **_POS)
omega_net = _define("omega_net", r"\omega", "1",
                    "share of the network time a second micro-batch hides behind memory and "
                    "arithmetic (0: none, 1: all)", "full", nonnegative=True, real=True)
q_lm = _define("q_lm", r"q_{\mathrm{LM}}", "tokens",
               "tokens of each sequence whose logits a pass computes: q in decode and "
               "verification, 1 in prefill", "full", **_POS)
p_disp = _define("p_disp", r"p_{\mathrm{disp}}", "bytes/element",
                 "bytes per element of an MoE's expert dispatch (1 for FP8)", "full", **_POS)
p_emb = _define("p_emb", r"p_{\mathrm{emb}}", "bytes/parameter",
                "bytes per weight of the embeddings (BF16 beside FP8 or FP4 layers)", "full",
                **_POS)
p_attn = _define("p_attn", r"p_{\mathrm{attn}}", "bytes/parameter",
                 "bytes per weight of attention, its indexer and the MoE router (BF16 beside "
                 "gpt-oss's MXFP4 experts); p is then the routed experts' or dense block's",
                 "full", **_POS)
p_sh = _define("p_sh", r"p_{\mathrm{sh}}", "bytes/parameter",
               "bytes per weight of the shared experts", "full", **_POS)


# The later chapters' symbols, registered here, after the ones above (the registry's order).
from .symbols_later import *  # noqa: E402, F403
