"""Conv3DBackpropInputV2 host tilings, one subpackage per architecture (arch35: Ascend 950)."""
