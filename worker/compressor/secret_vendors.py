"""What vendor-issued keys look like: a literal prefix, then a body of a known alphabet and length.

Data only; ``secret_patterns.py`` builds one redaction pass from each entry. The prefix stays in
the redacted text (it tells a reader which vendor's key it was), the body becomes a marker.
Written from each vendor's documented token format (prefix, alphabet, length); lengths are
lower bounds a little below the real ones where vendors have changed them, exact where a
fixed length is what sets a key apart from an ordinary word or hash.
"""

from __future__ import annotations

from typing import NamedTuple


class VendorToken(NamedTuple):
    # A fixed-width start: the boundary check sits right after it, so the engine can still jump
    # from one occurrence of the head to the next.
    head: str
    rest: str  # the rest of the prefix (a variant: live_, test_), kept in the output
    body: str  # the secret part
    needles: tuple[str, ...]  # lower-case substrings, at least one in every match
    # Short or word-like prefixes (cio, fw_, key-): only a random-looking body (letters mixed
    # with digits) is a key; cioSomethingLonger in code is a name.
    random_only: bool = False


_HEX32 = "[0-9a-fA-F]{32}"
_UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_END = "(?![A-Za-z0-9])"  # a fixed-length body: a longer run is something else

VENDOR_TOKENS: tuple[VendorToken, ...] = (
    # AI providers
    VendorToken(r"sk-", r"(?:ant-|proj-|svcacct-|admin-|or-v1-)?", r"[A-Za-z0-9_-]{20,}", ("sk-",)),
    VendorToken(r"xai-", "", r"[A-Za-z0-9]{32,}", ("xai-",)),
    VendorToken(r"hf_", "", r"[A-Za-z0-9]{30,}", ("hf_",)),
    VendorToken(r"api_org_", "", r"[A-Za-z0-9]{30,}", ("api_org_",)),  # Hugging Face orgs
    VendorToken(r"gsk_", "", r"[A-Za-z0-9]{30,}", ("gsk_",)),
    VendorToken(r"pplx-", "", r"[A-Za-z0-9]{30,}", ("pplx-",)),
    VendorToken(r"r8_", "", r"[A-Za-z0-9]{30,}", ("r8_",)),
    VendorToken(r"nvapi-", "", r"[A-Za-z0-9_-]{30,}", ("nvapi-",)),
    VendorToken(r"tvly-", "", r"[A-Za-z0-9_-]{20,}", ("tvly-",)),
    VendorToken(r"fw_", "", r"[A-Za-z0-9]{20,}", ("fw_",), random_only=True),  # Fireworks
    VendorToken(r"csk-", "", r"[A-Za-z0-9]{32,}", ("csk-",), random_only=True),  # Cerebras
    VendorToken(r"lsv2_", r"(?:pt|sk)_", r"[A-Za-z0-9_]{30,}", ("lsv2_",)),  # LangSmith
    VendorToken(r"pcsk_", "", r"[A-Za-z0-9_]{40,}", ("pcsk_",)),  # Pinecone
    VendorToken(r"sk_", "", rf"[0-9a-f]{{48}}{_END}", ("sk_",)),  # ElevenLabs
    # Cloud providers and platforms
    # AWS access key ids: long-term (AKIA), temporary (ASIA) and their kin.
    VendorToken(
        r"A", r"(?:KIA|SIA|BIA|CCA)", rf"[A-Z0-9]{{16}}{_END}", ("akia", "asia", "abia", "acca")
    ),
    VendorToken(r"ABSK", "", r"[A-Za-z0-9+/]{80,}={0,2}", ("absk",)),  # Bedrock API keys
    VendorToken(r"AIza", "", r"[0-9A-Za-z_-]{30,}", ("aiza",)),
    VendorToken(r"ya29\.", "", r"[A-Za-z0-9_-]{20,}", ("ya29.",)),  # Google OAuth access
    VendorToken(r"1//0", "", r"[A-Za-z0-9_-]{30,}", ("1//0",)),  # Google OAuth refresh
    VendorToken(r"GOCSPX-", "", r"[A-Za-z0-9_-]{24,}", ("gocspx-",)),  # Google client secret
    # Azure AD client secrets: three characters, a digit and "Q~" (the portal shows the three).
    # This head and Terraform's start with a class, not a literal: only texts holding the
    # needle pay for trying them at every position.
    VendorToken(
        r"[A-Za-z0-9_~.]{3}[0-9]Q~", "", r"[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])", ("q~",)
    ),
    # Alibaba Cloud and Tencent Cloud access key ids.
    VendorToken(r"LTAI", "", rf"[A-Za-z0-9]{{12,30}}{_END}", ("ltai",), random_only=True),
    VendorToken(r"AKID", "", rf"[A-Za-z0-9]{{32}}{_END}", ("akid",), random_only=True),
    VendorToken(r"do[por]_v1_", "", r"[a-f0-9]{40,}", ("_v1_",)),  # DigitalOcean
    VendorToken(r"HRKU-", "", r"[A-Za-z0-9_-]{40,}", ("hrku-",)),  # Heroku
    # Fly.io: fo1_ and the macaroons fm1a_, fm1r_, fm2_ (also after "FlyV1 ").
    VendorToken(
        r"f[om][12]", r"[ar]?_", r"[A-Za-z0-9_+/=-]{40,}", ("fo1_", "fm1a_", "fm1r_", "fm2_")
    ),
    VendorToken(r"nfp_", "", r"[A-Za-z0-9_]{30,}", ("nfp_",)),  # Netlify
    VendorToken(r"rnd_", "", r"[A-Za-z0-9]{28,}", ("rnd_",), random_only=True),  # Render
    VendorToken(r"hv[sbr]\.", "", r"[A-Za-z0-9_-]{24,}", ("hvs.", "hvb.", "hvr.")),  # Vault
    # Terraform Cloud: a token id, ".atlasv1.", the secret.
    VendorToken(r"[A-Za-z0-9]{14}\.atlasv1\.", "", r"[A-Za-z0-9_=-]{50,}", (".atlasv1.",)),
    VendorToken(r"pul-", "", rf"[0-9a-f]{{40}}{_END}", ("pul-",)),  # Pulumi
    VendorToken(
        r"dp\.",
        r"(?:st(?:\.[a-z0-9_-]{2,35})?|pt|ct|sa|scim|audit)\.",  # a service token names its config
        r"[A-Za-z0-9]{40,}",
        ("dp.",),
    ),
    VendorToken(r"ops_", "", r"eyJ[A-Za-z0-9+/=_-]{100,}", ("ops_eyj",)),  # 1Password service
    # 1Password account secret keys: A3-, then groups of capitals and digits.
    VendorToken(r"A3-", "", r"[A-Z0-9]{6}(?:-[A-Z0-9]{5,11}){4,5}(?![A-Za-z0-9-])", ("a3-",)),
    VendorToken(r"AGE-SECRET-KEY-1", "", r"[A-Z0-9]{40,}", ("age-secret",)),
    # Version control
    VendorToken(r"gh[pousr]_", "", r"[A-Za-z0-9]{30,}", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    VendorToken(r"github_pat_", "", r"[A-Za-z0-9_]{30,}", ("github_pat_",)),
    VendorToken(
        r"gl",
        r"(?:pat|dt|rt|ptt|soat|ft|cbt|imt|agent|oas|ffct)-",
        r"[A-Za-z0-9_-]{20,}",
        (
            *("glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glft-", "glcbt-"),
            *("glimt-", "glagent-", "gloas-", "glffct-"),
        ),
    ),
    VendorToken(r"GR1348941", "", r"[A-Za-z0-9_-]{20,}", ("gr1348941",)),  # GitLab runners
    # Atlassian: Bitbucket app passwords (ATBB), API tokens (ATATT3, ATCTT3).
    VendorToken(r"AT", r"(?:BB|ATT3|CTT3)", r"[A-Za-z0-9_=+/-]{28,}", ("atbb", "atatt3", "atctt3")),
    VendorToken(r"sgp_", "", r"[A-Za-z0-9_]{40,}", ("sgp_",)),  # Sourcegraph
    # Payments
    VendorToken(
        r"[sr]k_", r"(?:live|test|prod)_", r"[A-Za-z0-9]{16,}", ("k_live_", "k_test_", "k_prod_")
    ),
    VendorToken(r"whsec_", "", r"[A-Za-z0-9+/=]{20,}", ("whsec_",)),
    VendorToken(r"shp", r"(?:at|ss|ca|pa)_", r"[a-fA-F0-9]{32,}", ("shp",)),
    VendorToken(r"sq0", r"(?:atp|csp)-", r"[A-Za-z0-9_-]{22,}", ("sq0atp-", "sq0csp-")),  # Square
    # Meta (Facebook, Instagram, WhatsApp) access tokens and Square's "EAAA" ones.
    VendorToken(r"EAA", "", r"[A-Za-z0-9_-]{56,}", ("eaa",), random_only=True),
    # Braintree (PayPal) access tokens; Plaid access tokens.
    VendorToken(
        r"access_token\$", r"(?:production|sandbox)\$", r"[0-9a-z]{16}\$[0-9a-f]{32}", ("token$",)
    ),
    VendorToken(r"access-", r"(?:sandbox|development|production)-", _UUID, ("access-",)),
    # Flutterwave secret and encryption keys.
    VendorToken(r"FLWSECK", r"(?:_TEST)?-", r"[0-9a-fA-F]{12,32}(?:-X)?", ("flwseck",)),
    # Messaging, chat bots and mail
    VendorToken(r"xox[abposre]-", "", r"[A-Za-z0-9-]{10,}", ("xox",)),
    VendorToken(r"xapp-", "", r"[A-Za-z0-9-]{10,}", ("xapp-",)),
    # Twilio API key ids: "SK" and 32 hex digits; "sk" alone is in every other word.
    VendorToken(r"SK", "", rf"{_HEX32}{_END}", tuple(f"sk{c}" for c in "0123456789abcdef")),
    VendorToken(r"SG\.", "", r"[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", ("sg.",)),  # SendGrid
    VendorToken(r"key-", "", rf"[A-Za-z0-9]{{32}}{_END}", ("key-",), random_only=True),  # Mailgun
    # Brevo (Sendinblue): API and SMTP keys.
    VendorToken(r"x", r"(?:keysib|smtpsib)-", r"[0-9a-fA-F]{64}-[A-Za-z0-9]{16}", ("sib-",)),
    # Resend: "re_", an id, "_", the secret ("re_" also starts re_path and ends are_).
    VendorToken(r"re_", "", r"[A-Za-z0-9]{8}_[A-Za-z0-9]{20,}", ("re_",), random_only=True),
    # CI/CD and developer tools
    VendorToken(r"CCIP", r"(?:AT|RJ)_", r"[A-Za-z0-9]{16,}_[0-9a-fA-F]{40}", ("ccip",)),  # CircleCI
    VendorToken(r"bkua_", "", rf"[0-9a-f]{{40}}{_END}", ("bkua_",)),  # Buildkite
    VendorToken(r"dckr_", r"(?:pat|oat)_", r"[A-Za-z0-9_-]{24,}", ("dckr_",)),  # Docker Hub
    VendorToken(r"sq", r"[upa]_", rf"[0-9a-f]{{40}}{_END}", ("squ_", "sqp_", "sqa_")),  # Sonar
    VendorToken(r"tskey-", r"(?:[a-z]{3,8}-)?", r"[A-Za-z0-9-]{30,}", ("tskey-",)),  # Tailscale
    VendorToken(r"PMAK-", "", r"[0-9a-fA-F]{24}-[0-9a-fA-F]{34}", ("pmak-",)),  # Postman
    VendorToken(r"lin_", r"(?:api|oauth)_", r"[A-Za-z0-9]{32,}", ("lin_",)),  # Linear
    # Package registries
    VendorToken(r"npm_", "", r"[A-Za-z0-9]{30,}", ("npm_",)),
    VendorToken(r"pypi-", "", r"[A-Za-z0-9_-]{40,}", ("pypi-",)),
    VendorToken(r"rubygems_", "", rf"[0-9a-f]{{48}}{_END}", ("rubygems_",)),
    VendorToken(r"oy2", "", rf"[a-z0-9]{{43}}{_END}", ("oy2",), random_only=True),  # NuGet
    VendorToken(r"CLOJARS_", "", r"[A-Za-z0-9]{50,}", ("clojars_",)),
    VendorToken(r"cio", "", rf"[A-Za-z0-9]{{32}}{_END}", ("cio",), random_only=True),  # crates.io
    VendorToken(r"AKCp", "", r"[A-Za-z0-9]{60,}", ("akcp",)),  # JFrog Artifactory
    VendorToken(r"cmVmd", "", r"[A-Za-z0-9]{50,}", ("cmvmd",)),  # JFrog reference tokens
    # Observability
    VendorToken(r"sntry", r"[su]_", r"[A-Za-z0-9+/=_]{40,}", ("sntry",)),  # Sentry
    # New Relic user, insert, browser and admin keys.
    VendorToken(
        r"NR", r"(?:AK|II|JS|AA)-", r"[A-Za-z0-9_-]{19,}", ("nrak-", "nrii-", "nrjs-", "nraa-")
    ),
    VendorToken(r"glc_", "", r"[A-Za-z0-9+/]{32,}={0,3}", ("glc_",)),  # Grafana Cloud
    VendorToken(r"glsa_", "", r"[A-Za-z0-9]{32}_[0-9a-fA-F]{8}", ("glsa_",)),  # Grafana
    VendorToken(r"eyJrIjoi", "", r"[A-Za-z0-9+/]{40,}={0,3}", ("eyjrijoi",)),  # Grafana, older
    # Dynatrace: dt0c01.<public part>.<secret part>; both parts go.
    VendorToken(r"dt0", r"[a-z][0-9]{2}\.", r"[A-Za-z0-9]{20,}\.[A-Za-z0-9]{40,}", ("dt0",)),
    VendorToken(r"phx_", "", r"[A-Za-z0-9_]{30,}", ("phx_",)),  # PostHog personal keys
    VendorToken(r"xa", r"(?:at|pt)-", _UUID, ("xaat-", "xapt-")),  # Axiom
    # Databases as a service
    VendorToken(r"sbp_", "", r"[A-Za-z0-9]{32,}", ("sbp_",)),  # Supabase
    VendorToken(r"sb_secret_", "", r"[A-Za-z0-9_-]{20,}", ("sb_secret_",)),
    VendorToken(r"pscale_", r"(?:tkn|pw|oauth)_", r"[A-Za-z0-9_-]{30,}", ("pscale_",)),
    VendorToken(r"napi_", "", r"[a-z0-9]{40,}", ("napi_",), random_only=True),  # Neon
    VendorToken(r"mdb_sa_sk_", "", r"[A-Za-z0-9_-]{30,}", ("mdb_sa_",)),  # MongoDB Atlas
    VendorToken(r"dapi", "", rf"[0-9a-f]{{32}}(?:-[0-9])?{_END}", ("dapi",)),  # Databricks
    # ClickHouse Cloud: "4b1d" is in many a hash, hence the exact length and a random body.
    VendorToken(r"4b1d", "", rf"[A-Za-z0-9]{{38}}{_END}", ("4b1d",), random_only=True),
)
