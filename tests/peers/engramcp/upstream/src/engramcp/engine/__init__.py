"""Engine domain — processing engines (Layers 3-6)."""

from engramcp.engine.concepts import CandidateStatus
from engramcp.engine.concepts import ConceptCandidate
from engramcp.engine.concepts import ConceptRegistry
from engramcp.engine.confidence import CascadeResult
from engramcp.engine.confidence import ConfidenceConfig
from engramcp.engine.confidence import ConfidenceEngine
from engramcp.engine.confidence import CredibilityAssessment
from engramcp.engine.confidence import PropagatedRating
from engramcp.engine.consolidation import ConsolidationPipeline
from engramcp.engine.consolidation import ConsolidationRunResult
from engramcp.engine.demand import DemandSignal
from engramcp.engine.demand import QueryDemandTracker
from engramcp.engine.demand import QueryPattern
from engramcp.engine.extraction import ExtractionEngine
from engramcp.engine.extraction import LLMAdapter
from engramcp.engine.extraction import LLMError
from engramcp.engine.retrieval import GraphRetriever
from engramcp.engine.retrieval import RecencyConfidenceScorer
from engramcp.engine.retrieval import RetrievalEngine
from engramcp.engine.retrieval import RetrievalScorer
from engramcp.engine.schemas import ExtractedClaim
from engramcp.engine.schemas import ExtractedEntity
from engramcp.engine.schemas import ExtractedRelation
from engramcp.engine.schemas import ExtractionResult
from engramcp.engine.schemas import TemporalInfo

__all__ = [
    "CascadeResult",
    "CandidateStatus",
    "ConfidenceConfig",
    "ConfidenceEngine",
    "ConceptCandidate",
    "ConceptRegistry",
    "ConsolidationPipeline",
    "ConsolidationRunResult",
    "CredibilityAssessment",
    "DemandSignal",
    "ExtractedClaim",
    "ExtractedEntity",
    "ExtractedRelation",
    "ExtractionEngine",
    "ExtractionResult",
    "LLMAdapter",
    "LLMError",
    "PropagatedRating",
    "QueryDemandTracker",
    "QueryPattern",
    "GraphRetriever",
    "RecencyConfidenceScorer",
    "RetrievalEngine",
    "RetrievalScorer",
    "TemporalInfo",
]
