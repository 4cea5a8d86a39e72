//! Vocabulary for the generator: services, resources, verbs, argument names and the phrases
//! descriptions are built from. Written for toolcost; shaped like public API catalogues.

mod services;
pub use services::{CATEGORIES, SERVICES, SERVICE_RESOURCES, SYLLABLES};

/// Resources: (key words, phrase in prose, id argument)
pub const RESOURCES: &[(&str, &str, &str)] = &[
    ("INVOICE_ITEMS", "invoice items", "invoice_item_id"),
    ("INVOICES", "invoices", "invoice_id"),
    ("CUSTOMERS", "customers", "customer_id"),
    ("CHARGES", "charges", "charge_id"),
    ("REFUNDS", "refunds", "refund_id"),
    ("SUBSCRIPTIONS", "subscriptions", "subscription_id"),
    ("ISSUE", "issues", "issue_number"),
    ("PULL_REQUEST", "pull requests", "pull_number"),
    ("REPO", "repositories", "repo"),
    ("BRANCH", "branches", "branch"),
    ("COMMIT", "commits", "sha"),
    ("WORKFLOW_RUNS", "workflow runs", "run_id"),
    ("WORKER", "Workers scripts", "script_name"),
    ("ZONE", "zones", "zone_id"),
    ("DNS_RECORD", "DNS records", "record_id"),
    ("BUCKET", "buckets", "bucket_name"),
    ("OBJECT", "objects", "object_key"),
    ("DATABASE", "databases", "database_id"),
    ("QUERY", "queries", "query_id"),
    ("NAMESPACE", "namespaces", "namespace_id"),
    ("CHANNEL", "channels", "channel_id"),
    ("MESSAGE", "messages", "message_id"),
    ("THREAD", "threads", "thread_ts"),
    ("PAGE", "pages", "page_id"),
    ("BLOCK", "blocks", "block_id"),
    ("TASK", "tasks", "task_id"),
    ("PROJECT", "projects", "project_id"),
    ("ORDER", "orders", "order_id"),
    ("PRODUCT", "products", "product_id"),
    ("CONTACT", "contacts", "contact_id"),
    ("CONTACT_IDENTITIES", "contact identities", "identity_id"),
    ("DEAL", "deals", "deal_id"),
    ("TICKET", "tickets", "ticket_id"),
    ("EVENT", "events", "event_id"),
    ("CALENDAR", "calendars", "calendar_id"),
    ("FILE", "files", "file_id"),
    ("FOLDER", "folders", "folder_id"),
    ("SHEET", "spreadsheets", "spreadsheet_id"),
    ("ALERT", "alerts", "alert_id"),
    ("MONITOR", "monitors", "monitor_id"),
    ("INCIDENT", "incidents", "incident_id"),
    ("DEPLOYMENT", "deployments", "deployment_id"),
    ("LOG", "log lines", "log_id"),
    ("METRIC", "metrics", "metric_name"),
    ("GATEWAY", "gateways", "gateway_id"),
    ("MODEL", "models", "model"),
    ("USER", "users", "user_id"),
    ("TEAM", "teams", "team_id"),
    ("WEBHOOK", "webhooks", "webhook_id"),
    ("REPORT", "reports", "report_id"),
    ("DRAFT", "drafts", "draft_id"),
    ("LABEL", "labels", "label_name"),
    ("RECORD", "records", "record_id"),
    ("PLACE", "places", "place_id"),
    ("SECRET", "secrets", "secret_name"),
];

/// Verbs: (key word, imperative phrase, what the call returns)
pub const VERBS: &[(&str, &str, &str)] = &[
    (
        "LIST",
        "List",
        "a page of matching items with their ids and the cursor for the next page",
    ),
    (
        "GET",
        "Fetch one of the",
        "the full object with every field the API exposes",
    ),
    (
        "CREATE",
        "Create new",
        "the created object, including the id assigned by the service",
    ),
    (
        "UPDATE",
        "Update fields on existing",
        "the updated object as stored after the change",
    ),
    (
        "DELETE",
        "Delete",
        "a confirmation with the id that was removed",
    ),
    (
        "SEARCH",
        "Search",
        "ranked matches with a short excerpt for each",
    ),
    ("SEND", "Send", "the delivery id and its initial status"),
    (
        "EXPORT",
        "Export",
        "a download link that stays valid for one hour",
    ),
    (
        "SYNC",
        "Synchronise",
        "counts of created, updated and skipped items",
    ),
    (
        "ARCHIVE",
        "Archive",
        "the archived object with its archived_at time",
    ),
    (
        "COUNT",
        "Count",
        "a single integer total and the filter that produced it",
    ),
    (
        "QUERY",
        "Query",
        "rows as JSON objects plus timing and row counts",
    ),
];

pub const WHEN_OPENERS: &[&str] = &[
    "you need to",
    "the user asks you to",
    "a workflow has to",
    "before you report on a change you must",
    "a previous call returned an id and you now need to",
];

pub const CLAUSES: &[&str] = &[
    "filtered by status, owner or creation time and paged with a cursor",
    "scoped to a single account and safe to retry with the same idempotency key",
    "using the credentials named in the row rather than any key the caller holds",
    "including archived entries only when include_archived is true",
    "with results ordered newest first unless sort says otherwise",
    "respecting the service rate limit of roughly ten requests per second",
    "without touching billing, permissions or anything outside the named object",
    "so that later steps can refer to the returned id",
    "where dates are ISO 8601 strings in UTC and amounts are integers in minor units",
    "returning at most one hundred items per call",
    "and it fails with a clear error when the caller lacks the required scope",
    "which is read-only and never changes state on the remote side",
];

pub const CAVEATS: &[&str] = &[
    "Prefer the list call when you do not yet know the id.",
    "Large accounts can take several seconds to answer.",
    "Fields that are not supplied keep their current values.",
    "The call is idempotent when you pass the same key twice.",
    "Deleted items cannot be restored from here.",
    "Use the search call instead when you only know part of the name.",
    "Results reflect the state a few seconds ago, not this instant.",
    "Pass dry_run to see what would change without changing it.",
    "Check the receipt afterwards to confirm the remote side accepted it.",
];

/// Argument names with a type and a description; `enum` values follow a `|` in the type.
pub const ARGS: &[(&str, &str, &str)] = &[
    (
        "account_id",
        "string",
        "Account identifier the call is scoped to",
    ),
    (
        "limit",
        "integer",
        "Maximum number of items to return in one page",
    ),
    (
        "cursor",
        "string",
        "Opaque cursor from the previous page; omit it for the first page",
    ),
    (
        "status",
        "string|open|closed|pending|archived",
        "Only return items in this state",
    ),
    (
        "created_after",
        "string:date-time",
        "Only include items created after this instant",
    ),
    (
        "created_before",
        "string:date-time",
        "Only include items created before this instant",
    ),
    (
        "email",
        "string:email",
        "Email address of the person the call concerns",
    ),
    (
        "url",
        "string:uri",
        "Absolute URL of the resource to fetch or notify",
    ),
    (
        "query",
        "string",
        "Free-text search terms; quoted phrases match exactly",
    ),
    (
        "title",
        "string",
        "Short human-readable title shown in lists",
    ),
    (
        "body",
        "string",
        "Main text content; Markdown is rendered where the service supports it",
    ),
    (
        "tags",
        "array:string",
        "Tags to attach; existing tags are kept",
    ),
    ("labels", "array:string", "Label names to apply to the item"),
    (
        "include",
        "array:string|metadata|history|attachments|permissions",
        "Related data to expand in the response",
    ),
    (
        "amount",
        "integer",
        "Amount in the smallest currency unit, for example cents",
    ),
    (
        "currency",
        "string|usd|eur|gbp|jpy|cad|aud",
        "Three-letter ISO currency code in lower case",
    ),
    (
        "dry_run",
        "boolean",
        "Validate and describe the change without applying it",
    ),
    (
        "region",
        "string|us|eu|apac|auto",
        "Data region that should serve the request",
    ),
    (
        "priority",
        "string|low|normal|high|urgent",
        "Priority used for sorting and notifications",
    ),
    (
        "due_date",
        "string:date",
        "Calendar date by which the item is due",
    ),
    (
        "timezone",
        "string",
        "IANA time zone name used to interpret dates, such as Europe/Berlin",
    ),
    (
        "sort",
        "string|created|updated|name|relevance",
        "Field used to order the results",
    ),
    ("direction", "string|asc|desc", "Sort direction"),
    (
        "fields",
        "array:string",
        "Only return these fields of each item",
    ),
    (
        "metadata",
        "object",
        "Free-form key-value pairs stored with the item",
    ),
    (
        "idempotency_key",
        "string",
        "Unique key that makes retries safe",
    ),
    ("owner", "string", "Login or id of the owner"),
    ("assignee", "string", "User who should handle the item"),
    (
        "visibility",
        "string|public|private|internal",
        "Who can see the item",
    ),
    (
        "page_size",
        "integer",
        "Number of results per page, between 1 and 100",
    ),
    (
        "notify",
        "boolean",
        "Send the usual notifications to watchers",
    ),
    (
        "reason",
        "string",
        "Why the change is being made; stored in the audit log",
    ),
    ("parent_id", "string", "Identifier of the parent item"),
    (
        "format",
        "string|json|csv|markdown|html",
        "Format of the returned content",
    ),
    (
        "language",
        "string",
        "BCP 47 language tag for generated text",
    ),
    (
        "recipients",
        "array:string:email",
        "Email addresses that should receive it",
    ),
    ("start", "string:date-time", "Start of the time window"),
    ("end", "string:date-time", "End of the time window"),
    (
        "filter",
        "nested:filter",
        "Structured filter applied before paging",
    ),
    ("address", "nested:address", "Postal address"),
    (
        "schedule",
        "nested:schedule",
        "When and how often the job runs",
    ),
    (
        "retry",
        "nested:retry",
        "Retry policy for failed deliveries",
    ),
];

/// Nested object shapes referenced by `nested:` argument types.
/// (name, type, description) of one argument.
pub type Arg = (&'static str, &'static str, &'static str);

pub const NESTED: &[(&str, &[Arg])] = &[
    (
        "filter",
        &[
            ("field", "string", "Name of the field to compare"),
            (
                "operator",
                "string|eq|neq|gt|lt|contains|in",
                "Comparison operator",
            ),
            ("value", "string", "Value to compare against, as a string"),
        ],
    ),
    (
        "address",
        &[
            ("line1", "string", "Street address"),
            ("city", "string", "City or locality"),
            ("postal_code", "string", "Postal or ZIP code"),
            ("country", "string", "Two-letter ISO country code"),
        ],
    ),
    (
        "schedule",
        &[
            ("cron", "string", "Cron expression in UTC"),
            ("timezone", "string", "IANA time zone for display"),
            ("enabled", "boolean", "Whether the schedule is active"),
        ],
    ),
    (
        "retry",
        &[
            ("max_attempts", "integer", "Attempts before giving up"),
            (
                "backoff",
                "string|fixed|linear|exponential",
                "How the delay grows between attempts",
            ),
            ("delay_ms", "integer", "Initial delay in milliseconds"),
        ],
    ),
];

/// Words for extra qualifiers when a plain argument name is taken.
pub const QUALIFIERS: &[&str] = &[
    "primary",
    "secondary",
    "source",
    "target",
    "next",
    "previous",
    "default",
    "custom",
];
