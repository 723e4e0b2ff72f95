"""The dw tiling keys (conv3d_backprop_filter_v2_tiling_key.h): the template ids the kernel entry dispatches on."""

# The tiling key is GET_TPL_TILING_KEY(conv3DDWTemplateId): the template id itself.
TPL_SPLIT_DFL = 0          # base template (values from the closed TBE tiling)
TPL_SPLIT_M_K = 1          # basic block, M and K bound to cores
TPL_SPLIT_K_N = 2          # basic block, N and K bound to cores
TPL_SPLIT_M_N = 3          # basic block, M and N bound to cores
TPL_SPLIT_M_N_STREAMK = 4  # basic block, M and N bound to cores, tail cores split K (stream-K)
