package secrets

import (
	"bufio"
	"encoding/base64"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The credentials of these tests are made when they run, in the real
// format of each provider, from a seeded generator: the repository holds
// no value a secret scanner would flag, and none that works anywhere.

const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	hex    = "0123456789abcdef"
	b64    = alnum + "+/"
	b64url = alnum + "-_"
)

// gen makes random strings of a charset, the same ones for a seed.
type gen struct{ r *rand.Rand }

func newGen(seed uint64) *gen { return &gen{rand.New(rand.NewPCG(seed, seed^0x5ec2e7))} }

func (g *gen) of(charset string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = charset[g.r.IntN(len(charset))]
	}
	return string(b)
}

// jwt is a JSON Web Token of a real shape: header, claims, signature.
func (g *gen) jwt() string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
		enc.EncodeToString([]byte(`{"sub":"`+g.of(hex, 12)+`","iat":1767225600}`)) + "." + g.of(b64url, 43)
}

// privateKey is a PEM private key block of the given type ("RSA", "EC",
// "OPENSSH", ""), its body random base64 in 64-character lines.
func (g *gen) privateKey(kind string) string {
	if kind != "" {
		kind += " "
	}
	var b strings.Builder
	b.WriteString("-----BEGIN " + kind + "PRIVATE" + " KEY-----\n")
	for range 6 {
		b.WriteString(g.of(b64, 64) + "\n")
	}
	b.WriteString(g.of(b64, 20) + "==\n-----END " + kind + "PRIVATE" + " KEY-----")
	return b.String()
}

// credentials returns, by the kind Find must name, lines that hold a
// credential of that kind, in the places people write them.
func credentials(g *gen) map[string][]string {
	sk := "s" + "k-"
	return map[string][]string{
		"an OpenAI API key": {
			"- OpenAI key for the side project: " + sk + "proj-" + g.of(b64url, 48) + "T3Blbk" + "FJ" + g.of(b64url, 48),
			"here's my OpenAI key, " + sk + "proj-" + g.of(alnum, 40) + ", set it up",
			"OPENAI_API_KEY=" + sk + "svcacct-" + g.of(b64url, 60),
			"- legacy key " + sk + g.of(alnum, 20) + "T3Blbk" + "FJ" + g.of(alnum, 20),
		},
		"an API key (sk-…)": {
			"- DeepSeek key: " + sk + g.of(hex, 32),
			"key " + sk + g.of(alnum, 48),
		},
		"an Anthropic API key": {
			"- Anthropic: " + sk + "ant-api03-" + g.of(b64url, 93) + "AA",
			"ANTHROPIC_API_KEY=\"" + sk + "ant-admin01-" + g.of(b64url, 80) + "\"",
		},
		"an AWS access key ID": {
			"- AWS key id AKIA" + g.of(upnum, 16),
			"aws_access_key_id = ASIA" + g.of(upnum, 16),
		},
		"an AWS secret access key": {
			"aws_secret_access_key = " + g.of(b64, 40),
			"- AWS secret key: " + g.of(alnum, 20) + "/" + g.of(alnum, 19),
		},
		"a GitHub token": {
			"- GitHub token: gh" + "p_" + g.of(alnum, 36),
			"gh" + "o_" + g.of(alnum, 36), "gh" + "u_" + g.of(alnum, 36), "gh" + "s_" + g.of(alnum, 36), "gh" + "r_" + g.of(alnum, 36),
			"GITHUB_TOKEN=github" + "_pat_" + g.of(alnum, 22) + "_" + g.of(alnum, 59),
		},
		"a GitLab token": {"- GitLab: gl" + "pat-" + g.of(b64url, 20)},
		"a Slack token": {
			"- Slack bot token xo" + "xb-" + g.of("0123456789", 12) + "-" + g.of("0123456789", 13) + "-" + g.of(alnum, 24),
			"xo" + "xp-" + g.of("0123456789", 11) + "-" + g.of("0123456789", 12) + "-" + g.of("0123456789", 13) + "-" + g.of(hex, 32),
			"- Socket Mode: xa" + "pp-1-A" + g.of(upnum, 10) + "-" + g.of("0123456789", 13) + "-" + g.of(hex, 64),
		},
		"a Slack webhook URL":   {"- alerts go to https://hooks.slack" + ".com/services/T" + g.of(upnum, 8) + "/B" + g.of(upnum, 10) + "/" + g.of(alnum, 24)},
		"a Discord webhook URL": {"https://discord" + ".com/api/webhooks/" + g.of("0123456789", 18) + "/" + g.of(b64url, 68)},
		"a Stripe secret key": {
			"- Stripe live key: s" + "k_live_" + g.of(alnum, 99),
			"STRIPE_KEY=r" + "k_test_" + g.of(alnum, 24),
			"webhook secret wh" + "sec_" + g.of(alnum, 32),
		},
		"a Google API key":                      {"- Maps key AI" + "za" + g.of(b64url, 35)},
		"a Google OAuth secret or token":        {"client secret GOCSPX" + "-" + g.of(b64url, 28), "ya" + "29." + g.of(b64url, 120)},
		"a SendGrid API key":                    {"- SendGrid: S" + "G." + g.of(b64url, 22) + "." + g.of(b64url, 43)},
		"a Twilio API key":                      {"- Twilio API key S" + "K" + g.of(hex, 32)},
		"an npm token":                          {"//registry.npmjs.org/:_authToken=n" + "pm_" + g.of(alnum, 36)},
		"a PyPI token":                          {"password = py" + "pi-AgEIcHlwaS5vcmc" + g.of(b64url, 70)},
		"a Hugging Face token":                  {"- HF token h" + "f_" + g.of(alnum, 34)},
		"a DigitalOcean token":                  {"do" + "p_v1_" + g.of(hex, 64)},
		"a Shopify access token":                {"- Shopify admin token sh" + "pat_" + g.of(hex, 32)},
		"a Telegram bot token":                  {"- bot token " + g.of("123456789", 10) + ":A" + "A" + g.of(b64url, 33)},
		"an API key of a model provider":        {"- Groq: gs" + "k_" + g.of(alnum, 52), "TAVILY_API_KEY=tv" + "ly-dev-" + g.of(alnum, 32), "- Fireworks: f" + "w_" + g.of(alnum, 28) + "aZ9"},
		"a Mailgun or Linear or Notion API key": {"mailgun key-" + g.of(hex, 32), "- Mailgun: key-" + g.of(hex, 32), "LINEAR=lin" + "_api_" + g.of(alnum, 40)},
		"a private key": {
			g.privateKey("RSA"), g.privateKey("OPENSSH"), "key:\n" + g.privateKey(""),
			// A key written in parts: its header alone, or with its body's start.
			"- Key:\n-----BEGIN OPENSSH PRIVATE" + " KEY-----\n", "-----BEGIN RSA PRIVATE" + " KEY-----",
			"-----BEGIN EC PRIVATE" + " KEY-----\n" + g.of(b64, 20),
			// A Google service account's key file: the block in a JSON string.
			`{"type": "service_account", "project_id": "acme-prod", "private_key_id": "` + g.of(hex, 40) + `", "private_key": "` +
				strings.ReplaceAll(g.privateKey(""), "\n", `\n`) + `\n", "client_email": "ci@acme-prod.iam.gserviceaccount.com"}`,
		},
		"a JSON Web Token": {"- session cookie " + g.jwt()},
		"a Datadog, OpenWeatherMap or Algolia API key": {
			"- Datadog API key: " + g.of(hex, 32), "DD_API_KEY=" + g.of(hex, 32), "- OpenWeatherMap key is " + g.of(hex, 32), "- Algolia admin key: " + g.of(hex, 32),
		},
		"a bearer token": {
			"Authorization: Bearer " + g.of(b64url, 40),
			"curl -H 'Authorization: bearer " + g.of(alnum, 32) + "' https://api.acme.test",
		},
		"basic authentication credentials": {"Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+g.of(alnum, 12)))},
		"a password in a connection string": {
			"- prod DB: postgres://app:" + g.of(alnum, 16) + "@db.internal:5432/prod",
			"mongodb+srv://admin:Xk9" + "#mP2q@cluster0.mongodb.net/app",
			"postgres://app:pass" + "word1@host",
			"redis://:" + g.of(alnum, 20) + "@cache:6379",
		},
		"a password": {
			"- home wifi password: " + "hunt3r" + "#2",
			"password=Tr0ub4dor" + "&3",
			"- The router's admin password is P@ss" + "w0rd!",
			"DB_PASS=" + g.of(alnum, 12) + "",
			"pwd: " + g.of(alnum, 10) + "9",
			"passphrase: " + g.of(alnum, 20),
			// In other languages, and curl's -u.
			"- Passwort: Zq8#" + "kLm2Vw", "- パスワード: Zq8#" + "kLm2Vw", "- mot de passe : Zq8#" + "kLm2Vw", "- contraseña: Zq8#" + "kLm2Vw",
			"- curl -u admin:" + g.of(alnum, 14) + "7 https://api.acme.test",
		},
		"an API key or token": {
			"- API key for the weather service: " + g.of(alnum, 32),
			"api_key = \"" + g.of(alnum, 40) + "\"",
			"access token is " + g.of(b64url, 30) + "Q7",
			"AccountKey=" + g.of(b64, 86) + "==",
			// A long random value named only as a key or a token.
			"- X-API-Key: " + g.of(alnum, 30) + "7Q", "curl -H 'api-key: " + g.of(alnum, 30) + "7Q' https://acme.openai.azure.test",
			"- here's my key: " + g.of(alnum, 38) + "7Q", "- token " + g.of(alnum, 38) + "7Q", "- the Azure storage key: " + g.of(b64, 84) + "7Q==",
		},
	}
}

// lookAlikes returns, by the kind they resemble, lines that hold no
// credential: placeholders, documentation's examples, mentions, names.
func lookAlikes(g *gen) map[string][]string {
	sk := "s" + "k-"
	return map[string][]string{
		"an OpenAI API key": {
			sk + "proj-…", sk + "proj-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", sk + "proj-<your-key>", "OPENAI_API_KEY=" + sk + "proj-YOUR_KEY_HERE_abcdefghij",
			"scikit-learn is imported as " + sk + "learn", "repo " + sk + "proj-billing-dashboard-for-the-team", sk + "proj-billing-dashboard-2025-q3 is the Jira epic", sk + "proj-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", sk + "proj-" + strings.Repeat("ab", 15),
		},
		"an API key (sk-…)":    {"task-" + g.of(alnum, 40), sk + strings.Repeat("a", 40), "ask-" + g.of(alnum, 40)},
		"an Anthropic API key": {sk + "ant-…", sk + "ant-api03-xxxx"},
		"an AWS access key ID": {"AKIAIOSFODNN7EXAMPLE", "AKIA", "AKIA0000000000000000", "MAKIA" + g.of(upnum, 16) + "X", "AKIAI" + "OSFODNN7EXAMPLEKEY"},
		"an AWS secret access key": {
			"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = ${AWS_SECRET_ACCESS_KEY}",
			"the AWS secret key is in the vault", "aws secret: " + strings.Repeat("a", 40),
		},
		"a GitHub token":       {"gh" + "p_", "gh" + "p_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "gh_cli token", "my_gh" + "p_" + strings.Repeat("1", 36)},
		"a GitLab token":       {"gl" + "pat-xxxxxxxxxxxxxxxxxxxx", "glpat prefix"},
		"a Slack token":        {"xo" + "xb-your-bot-token", "xoxb tokens", "xo" + "xb-0000000000-0000000000000-xxxxxxxxxxxxxxxxxxxxxxxx", "O-RAN xApp charts: xapp-onboarder-helm-chart and xapp-frame-python-sdk"},
		"a Slack webhook URL":  {"https://hooks.slack" + ".com/services/XXXXX/XXXXX/XXXXX", "hooks.slack.com is allowed by the firewall"},
		"a Stripe secret key":  {"s" + "k_live_…", "s" + "k_test_xxxxxxxxxxxxxxxxxxxxxxxx", "pk_live_" + g.of(alnum, 24), "rk_live_ keys are restricted"},
		"a Google API key":     {"AI" + "za", "AI" + "zaSyXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX", "AI" + "za" + strings.Repeat("b", 35)},
		"a SendGrid API key":   {"S" + "G.xxxxx", "SG. is the prefix"},
		"a Twilio API key":     {"SKU " + g.of(hex, 32), "S" + "K" + strings.Repeat("0", 32), "TASK" + g.of(hex, 32)},
		"a Hugging Face token": {"hf_hub_download", "hf_" + strings.Repeat("x", 34), "hf_transfer is enabled"},
		"a private key": {
			"-----BEGIN OPENSSH PRIVATE" + " KEY----- is the first line of the file",
			"-----BEGIN RSA PRIVATE" + " KEY-----\n...\n-----END RSA PRIVATE" + " KEY-----",
			"-----BEGIN CERTIFICATE-----\n" + g.of(b64, 64) + "\n-----END CERTIFICATE-----",
			"-----BEGIN PUBLIC KEY-----\n" + g.of(b64, 64) + "\n-----END PUBLIC KEY-----",
		},
		"a JSON Web Token": {"eyJ is how a JWT starts", "eyJhbGciOiJIUzI1NiJ9.eyJ...", "JWT tokens are signed with RS256",
			// jwt.io's example, in every page about them, whatever its signature.
			"The jwt.io example eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ" + "." + g.of(b64url, 43) + " decodes to John Doe"},
		"an API key of a model provider":        {"Firmware fw_" + g.of(hex, 40) + " bricked the router", "Model csk-llama-3.3-70b-instruct-versatile-2025 on Cerebras"},
		"a Mailgun or Linear or Notion API key": {"Cache entries are named key-" + g.of(hex, 32), "mailgun key-xxxx"},
		"a bearer token": {"Authorization: Bearer <token>", "Authorization: Bearer $TOKEN", "Bearer token auth replaced basic auth", "bearer tokens expire after 3600 seconds", "Authorization: Bearer {{token}}",
			"The gateway expects Bearer AuthenticationMiddleware to run first", "The API wants `Authorization: Bearer ACCESS_TOKEN_FROM_STEP_2`", "Bearer getAccessTokenFromSession() is the helper"},
		"a password in a connection string": {
			"postgres://user:password" + "@host:5432/db", "postgres://localhost:5432/app", "redis://:${REDIS_PASSWORD}@cache:6379",
			"https://github.com/acme/api", "mysql://root:****@db", "ssh://git@github.com:22/acme/api.git",
			// Placeholders and the defaults of local servers, in every
			// tutorial; a port and a query are no user and password.
			"postgres://user:pass" + "@host", "postgres://USER:PASS" + "@HOST/DB", "postgres://user:..." + "@db.example.com/app",
			"postgres://postgres:postgres" + "@localhost:5432/app", "amqp://guest:guest" + "@localhost:5672", "mysql://root:root" + "@127.0.0.1:3306/test",
			"https://username:personal-access-token" + "@git.example.com/repo.git", "https://api.example.com:8443?email=alice" + "@example.com",
			"https://meet.example.com:443?join=bob" + "@example.com",
		},
		"a password": {
			"password reset emails land in spam", "my password manager is Bitwarden", "uses 1Password", "password: see 1Password",
			"password: 1Password", "password is in 1Password", "password=${DB_PASSWORD}", "password = os.getenv(\"DB_PASSWORD\")", "password: ********",
			"password: 12 characters", "password: required", "password_hash is bcrypt", "pass: the exam", "DB_PASSWORD=$DB_PASSWORD", "passcode: 4821",
			"password: DB_PASSWORD", "password: <password>", "password is expired", "the password is changed monthly",
			// Words with a number, word-word adjectives, paths, a program's
			// values, "pass" as a verb or a ticket, the joke.
			"password is argon2id-hashed", "The password is SHA256-hashed", "Phone passcode is 6-digit", "Gym door passcode is 4-digit",
			"The admin password is SSO-only now", "Guest Wi-Fi: password is WPA3-only", "Epic Pass is Vail-owned", "Boarding pass is QR-coded",
			"Eurail pass is 2nd-class", "`pwd: ~/src/mdmemory`", "password: ./secrets/db.txt", "The loader reads `password=cfg.dbPass`",
			"Headers to pass on every call: X-Api-Version=2", "password: min12Chars policy", "pass: test_login2, fail: test_signup",
			"Password = 'hunter" + "2' is the classic joke",
		},
		"an API key or token": {
			"the Tavily API key has a 1,000/day limit", "token limit is 8k", "api_key_env: OPENAI_API_KEY", "API key: read from OPENAI_API_KEY",
			"token: see the CI settings page", "secret: the one in the team vault", "api_key: your_api_key_here_1234567890", "token = " + strings.Repeat("abc123", 5),
			"api_key=" + strings.Repeat("A", 40), "No Firebase API key in the build", "the Stripe webhook failed with 401",
			// Paths, resources' names, a program's values: words.
			"DB password secret: projects/acme-prod/secrets/DB_PASSWORD/versions/latest", "token: Settings/Developer/PersonalAccessTokens/Fine-grained",
			"access token = OAuth2/ClientCredentials/Flow", "credentials: AzureCliCredential/DefaultAzureCredential chain",
			"The CSRF token is HMAC-SHA256/base64url-encoded", "apiKey: import.meta.env.VITE_MAPBOX_TOKEN2", "token is X-Amz-Security-Token-Header2",
			"k8s secret: app/Postgres-Credentials-v2/password",
			"Fixed in commit key " + g.of(hex, 40), "key: projects/acme-prod/locations/global/keyRings/prod-ring/cryptoKeys/db",
			"token " + strings.Repeat("Ab1", 12), "docker run -u 1000:1000 alpine", "curl -u $USER:$TOKEN https://x.test", "curl --user www-data:www-data https://x",
			"Datadog agent bumped to " + g.of(hex, 40), "API key header name is X-API-Key", "X-API-Key: ${API_KEY}", "x-api-key: see the vault entry api-gateway-prod",
			"- Stripe publishable key: pk" + "_live_" + g.of(alnum, 40), "- DAI token 0x6B175474E89094C44Da98b954EedeAC495271d0F on mainnet",
			"- S3 object key: uploads/Avatars/" + g.of(hex, 24) + "Q" + g.of(hex, 8) + "/original", "- Public key AAAAC3NzaC1lZDI1NTE5AAAAI" + g.of(b64, 43) + " alice@laptop", "the Datadog key is in Vault", "DD_API_KEY=${DD_API_KEY}",
		},
	}
}

// TestFind: every credential is found, named for its kind, at its value;
// no look-alike is.
func TestFind(t *testing.T) {
	g := newGen(33)
	seen := map[string]bool{}
	for kind, lines := range credentials(g) {
		seen[kind] = true
		for _, line := range lines {
			got := Find(line)
			if assert.Len(t, got, 1, "%s: %q", kind, line) {
				assert.Equal(t, kind, got[0].Kind, "%q", line)
				v := line[got[0].Start:got[0].End]
				assert.GreaterOrEqual(t, len(v), 4, "the value %q of %q", v, line)
				assert.NotContains(t, []string{" ", "\t"}, v[:1], "the value starts at the value")
			}
		}
	}
	for kind, lines := range lookAlikes(g) {
		for _, line := range lines {
			assert.Empty(t, Find(line), "%s look-alike %q", kind, line)
		}
	}
	for _, k := range Kinds() {
		assert.True(t, seen[k], "no test credential of the kind %q", k)
	}
}

// TestPatternedValuesFound: a value of a credential's shape is one, even
// when it looks typed by hand (a sequence, a pattern repeated): only
// placeholders (xxxx, <your-key>, EXAMPLE, a run of one character) are not.
func TestPatternedValuesFound(t *testing.T) {
	sk := "s" + "k-"
	for _, line := range []string{
		"gh" + "p_1234567890abcdefghijklmnopqrstuvwxyz",
		sk + "proj-" + strings.Repeat("a1B2c3D4", 6),
		sk + "1234567890abcdef1234567890abcdef",
		"AKIA" + "1234567890ABCDEF",
		"h" + "f_abcdefghijklmnopqrstuvwxyzabcdefghij",
	} {
		assert.Len(t, Find("key "+line), 1, "%q", line)
	}
}

// TestFindMany: several credentials in one text are found, in order, each
// once, whatever rule found them.
func TestFindMany(t *testing.T) {
	g := newGen(7)
	gh := "gh" + "p_" + g.of(alnum, 36)
	aws := "AKIA" + g.of(upnum, 16)
	text := "- GitHub: " + gh + "\n- the Tavily API key has a limit\n- AWS: " + aws + "\nDB_PASS=" + g.of(alnum, 12) + "\n"
	got := Find(text)
	require.Len(t, got, 3)
	assert.Equal(t, gh, text[got[0].Start:got[0].End])
	assert.Equal(t, aws, text[got[1].Start:got[1].End])
	assert.Equal(t, "a password", got[2].Kind)
	assert.Nil(t, Find(""))
}

// TestRandomKeysFound: many generated keys of each fixed-format family
// are all found (the entropy floor stops no real key).
func TestRandomKeysFound(t *testing.T) {
	g := newGen(1)
	sk := "s" + "k-"
	for range 500 {
		for _, line := range []string{
			sk + "proj-" + g.of(b64url, 156),
			sk + "ant-api03-" + g.of(b64url, 95),
			"AKIA" + g.of(upnum, 16),
			"gh" + "p_" + g.of(alnum, 36),
			"AI" + "za" + g.of(b64url, 35),
			"h" + "f_" + g.of(alnum, 34),
			"n" + "pm_" + g.of(alnum, 36),
			"gl" + "pat-" + g.of(b64url, 20),
			"s" + "k_live_" + g.of(alnum, 24),
			g.jwt(),
		} {
			require.Len(t, Find("key "+line), 1, "%q", line)
		}
	}
}

// TestOrdinaryLines: no false refusal on ordinary memory lines: the
// corpus in testdata (lines people and agents write, many of them
// mentioning credentials), every line of the repository's documentation,
// and generated fact lines and entries.
func TestOrdinaryLines(t *testing.T) {
	var lines []string
	f, err := os.Open(filepath.Join("testdata", "ordinary.txt"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := sc.Text(); !strings.HasPrefix(l, "# ") {
			lines = append(lines, l)
		}
	}
	require.NoError(t, sc.Err())
	require.GreaterOrEqual(t, len(lines), 200)
	docs, err := filepath.Glob(filepath.Join("..", "..", "*.md"))
	require.NoError(t, err)
	more, _ := filepath.Glob(filepath.Join("..", "..", "*", "*.md"))
	docs = append(docs, more...)
	require.NotEmpty(t, docs)
	for _, d := range docs {
		b, err := os.ReadFile(d)
		require.NoError(t, err)
		lines = append(lines, strings.Split(string(b), "\n")...)
	}
	lines = append(lines, generated(500)...)
	refused := 0
	for _, l := range lines {
		if got := Find(l); len(got) > 0 {
			refused++
			t.Errorf("false refusal (%s): %q", got[0].Kind, l)
		}
	}
	t.Logf("%d ordinary lines, %d refused", len(lines), refused)
	// The corpus as one text too: rules that look across lines.
	assert.Empty(t, Find(strings.Join(lines, "\n")))
}

// generated returns n fact lines and episode lines made from templates,
// seeded.
func generated(n int) []string {
	g := newGen(99)
	people := strings.Fields("Priya Marcus Elena Tomas Aisha Kenji Sofia Daniel Maya Oliver Fatima Lucas Mei Arjun")
	things := strings.Fields("budget report schedule contract proposal server migration invoice roadmap API token password key secret webhook")
	forms := []string{
		"- %s reviewed the %s on Tuesday",
		"- %s owns the %s, ask before changing it",
		"- %s: prefers the %s in writing",
		"- Lesson: check the %[2]s with %[1]s before the release",
		"- %s rotated the %s after the audit",
		"- The %[2]s for %[1]s's team is kept in the vault",
		"- %s's %s expired; a new one was issued",
	}
	out := make([]string, n)
	for i := range out {
		p, th := people[g.r.IntN(len(people))], things[g.r.IntN(len(things))]
		out[i] = strings.ReplaceAll(strings.ReplaceAll(forms[g.r.IntN(len(forms))], "%[1]s", p), "%[2]s", th)
		out[i] = strings.Replace(strings.Replace(out[i], "%s", p, 1), "%s", th, 1)
	}
	return out
}

// TestFindBounded: a large text of many near-misses is judged in
// bounded time, and each rule looks at a bounded number of matches.
func TestFindBounded(t *testing.T) {
	sk := "s" + "k-"
	text := strings.Repeat("password: "+sk+"proj-x AKIA bearer eyJ.eyJ. ://a:b@ ", 20000)
	start := time.Now()
	Find(text)
	// Not a benchmark: a guard against a blow-up by orders of magnitude
	// (the expressions are linear, RE2).
	assert.Less(t, time.Since(start), 30*time.Second)
	g := newGen(5)
	var many strings.Builder
	for range 200 {
		many.WriteString("gh" + "p_" + g.of(alnum, 36) + "\n")
	}
	assert.Len(t, Find(many.String()), maxPerRule)
}

func TestHelpers(t *testing.T) {
	assert.Equal(t, "abc-xyz", toLower("ABC-xyz"))
	assert.Equal(t, 0.0, entropy(""))
	assert.InDelta(t, 1.0, entropy("abab"), 1e-9)
	assert.Equal(t, 4, classes("aA1!"))
	assert.Equal(t, 1, classes("a_b-c.d"))
	assert.True(t, placeholder("000000"))
	assert.False(t, looksLikePassword("Ab1"))
	assert.False(t, looksLikePassword(strings.Repeat("Ab1", 30)))
	assert.False(t, looksLikePassword("https://x.y"))
	assert.False(t, looksLikePassword("get_pw()"))
	assert.True(t, looksLikePassword("hunt3r#2."))
	assert.False(t, looksLikePassword("hunter2."), "the joke, and words with a number")
	assert.False(t, urlPassword("$X"))
	assert.NotEmpty(t, Kinds())
}

// TestLookAlikesHideNothing: any number of matches a rule rejects
// (mentions, placeholders) before a credential do not hide it: only
// findings count towards the bound of a rule.
func TestLookAlikesHideNothing(t *testing.T) {
	sk := "s" + "k-"
	g := newGen(64)
	for _, c := range []struct{ lookAlike, real string }{
		{"- Service X: password is managed by Bitwarden\n", "- NAS: password is Zq8#" + "kLm2Vw\n"},
		{"- key " + sk + "proj-" + strings.Repeat("x", 40) + " (placeholder in docs)\n", "- real: " + sk + "proj-" + g.of(alnum, 48) + "\n"},
		{"- the router password is printed on it\n", "- NAS password: Zq8#" + "kLm2Vw\n"},
	} {
		text := strings.Repeat(c.lookAlike, 3*maxPerRule) + c.real
		got := Find(text)
		if assert.Len(t, got, 1, "%q after %d look-alikes", c.real, 3*maxPerRule) {
			assert.Equal(t, len(text)-len(c.real), strings.LastIndexByte(text[:got[0].Start], '\n')+1)
		}
	}
}

// TestPrivateKeyInJSON: a private key in a JSON string, its lines joined
// by \n escapes (a Google service account's key file), is found at its
// body, as a block with newlines is.
func TestPrivateKeyInJSON(t *testing.T) {
	g := newGen(12)
	key := g.privateKey("RSA")
	body := key[strings.IndexByte(key, '\n')+1:]
	body = body[:strings.IndexByte(body, '\n')]
	text := `{"private_key": "` + strings.ReplaceAll(key, "\n", `\n`) + `\n"}`
	got := Find(text)
	require.Len(t, got, 1)
	assert.Equal(t, "a private key", got[0].Kind)
	assert.Equal(t, body, text[got[0].Start:got[0].End])
}

// TestWordyRandom: names, paths and phrases are wordy; random values,
// which the rules that judge by wordy must find, rarely are: under 1 in
// 1,000 of 32 characters, 1 in 100 of 20, 3 in 100 of 12 (a password a
// generator made that reads as words is let pass: precision first).
func TestWordyRandom(t *testing.T) {
	for _, v := range []string{"argon2id-hashed", "SHA256-hashed", "6-digit", "SSO-only", "WPA3-only", "min12Chars", "test_login2", "hunter2",
		"projects/acme-prod/secrets/DB_PASSWORD/versions/latest", "OAuth2/ClientCredentials/Flow", "X-Amz-Security-Token-Header2", "import.meta.env.VITE_MAPBOX_TOKEN2",
		"HMAC-SHA256/base64url-encoded", "AuthenticationMiddleware", "ACCESS_TOKEN_FROM_STEP_2", "app/Postgres-Credentials-v2/password"} {
		assert.True(t, wordy(v), "%q", v)
	}
	for _, v := range []string{"Tr0ub4dor&3", "P@ss" + "w0rd!", "Zq8#kLm2Vw"} {
		assert.False(t, wordy(v), "%q", v)
	}
	g := newGen(8)
	for _, c := range []struct{ n, max int }{{12, 300}, {20, 100}, {32, 10}, {40, 10}} {
		n := 0
		for range 10000 {
			if v := g.of(alnum, c.n); classes(v) >= 3 && wordy(v) {
				n++
			}
		}
		assert.LessOrEqual(t, n, c.max, "random values of %d characters judged wordy in 10,000", c.n)
		t.Logf("%d characters: %d in 10,000 wordy", c.n, n)
	} // Keys of base64, with its '/', are judged keys, not paths.
	n := 0
	for range 10000 {
		if v := g.of(b64, 40); classes(v) >= 3 && entropy(v) >= 4 && !looksLikeKey(v) {
			n++
		}
	}
	assert.LessOrEqual(t, n, 10, "random base64 keys of 40 characters not judged keys in 10,000")
}
