"""Human adjudication: blinded rating packets out, ratings in, judges measured against people.

A rating packet is a stratified sample of a run's answered observations
(condition x category x deterministic outcome), shuffled and stripped of
system, condition, model and run identifiers. Raters label each item with a
protocol outcome and a 1-5 rubric score in a self-contained HTML form (or the
CSV twin); the key that maps item ids back to observations stays in
`KEY-do-not-share/` and in `rating_packets`. Where raters disagree (label, or
rubric by more than 1) an adjudication packet holds just those items; agreed
and adjudicated labels become judge `human` in `judgements`.

Agreed rubric = the lower median of the raters' scores. Per-label agreement is
one-vs-rest: Cohen's kappa and percent agreement on "label vs any other label".
"""


from __future__ import annotations

from lsrep.rating.adjudication import (  # noqa: F401
    disagrees,
    export_adjudication,
    import_adjudication,
    latest_packet,
)
from lsrep.rating.agreement import (  # noqa: F401
    agreement_report,
    headline_judge,
    rating_section,
)
from lsrep.rating.common import (  # noqa: F401
    HUMAN_JUDGE,
    HUMAN_JUDGE_VERSION,
    KEY_DIR,
    PER_LABEL_METHOD,
    RATER_LABELS,
    RATINGS_FORMAT,
    RUBRIC_SCORES,
    TEMPLATES,
    AgreementReport,
    HeadlineJudges,
    HeadlineLabel,
    JudgeAgreement,
    LabelAgreement,
    PacketFiles,
    RaterPair,
    RatingsImport,
)
from lsrep.rating.packets import (  # noqa: F401
    allocate,
    export_packets,
    sample_observations,
)
from lsrep.rating.ratings_files import (  # noqa: F401
    import_ratings,
    packet_key,
)
