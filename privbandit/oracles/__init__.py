"""Private regression oracles behind one epoch-batched interface (:mod:`.base`), by name
through :mod:`.registry`.

Importing this package registers every oracle; ``make_oracle(name, ...)`` builds one and
``oracle_names()`` lists them. ``check_oracle(oracle)`` runs the interface contract on any oracle
(:mod:`.checks`).
"""

from .base import EpochFit, Estimate, LocalEpochFit, Oracle, SummingLocalFit, stage_sizes_split
from .checks import ORACLE_CHECKS, ContractError, check_oracle
from .dp_sgd import DPSGD
from .glm_jdp import IWGLMDP
from .glm_ldp import IWGLMLDP
from .iw_jdp import IWFixedPDP, IWRegressionDP, SpectralDP
from .iw_ldp import IWFixedPLDP, IWRegressionLDP, learn_u_ldp
from .iw_vec_ldp import IWVectorLDP
from .ldp_sgd import LDPClippedSGD
from .registry import ORACLE_REGISTRY, make_oracle, oracle_class, oracle_names, register_oracle
from .ridge import Ridge
from .simple_ldp import SimpleLDP
from .ssp import SSP
from .ssp_local import SSPLocal

__all__ = [
    "ORACLE_REGISTRY", "EpochFit", "Estimate", "LocalEpochFit", "SummingLocalFit", "Oracle", "Ridge", "make_oracle",
    "oracle_class", "oracle_names", "register_oracle", "stage_sizes_split",
    # joint/central-DP oracles
    "DPSGD", "IWFixedPDP", "IWGLMDP", "IWRegressionDP", "SSP", "SpectralDP",
    # local-DP oracles
    "IWFixedPLDP", "IWGLMLDP", "IWRegressionLDP", "IWVectorLDP", "LDPClippedSGD", "SSPLocal", "SimpleLDP",
    "learn_u_ldp",
    # the contract as a public checker
    "ORACLE_CHECKS", "ContractError", "check_oracle",
]
