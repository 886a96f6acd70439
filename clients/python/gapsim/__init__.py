"""gapsim -- Python client of gapsimd, the residual-gap contact solver service.

Standard library only; numpy is used when installed (``.npy`` downloads
become ndarrays and ndarrays are accepted as gaps). See docs/python.md.
"""
from .client import Client, Job
from .errors import GapsimError
from .npy import HAVE_NUMPY

__all__ = ["Client", "Job", "GapsimError", "HAVE_NUMPY"]
__version__ = "0.2.0"
