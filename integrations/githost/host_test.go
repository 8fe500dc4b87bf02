package githost

import "testing"

func TestResolveHost(t *testing.T) {
	ghe := Host{URL: "https://github.example.com", Type: GitHub, Token: "a"}
	gl8443 := Host{URL: "https://gitlab.example.com:8443/", Type: GitLab, Token: "b"}
	gl9443 := Host{URL: "https://gitlab.example.com:9443", Type: GitLab, Token: "c"}
	bbs := Host{URL: "https://BB.example.com:443/bitbucket", Type: BitbucketServer, Token: "d"}
	ghCom := Host{URL: "https://github.com", Type: GitHub, Token: "e"}
	v6 := Host{URL: "https://[2001:DB8::1]:8443", Type: Gitea, Token: "f"}
	configured := []Host{ghe, gl8443, gl9443, bbs}

	for _, tc := range []struct {
		name  string
		repo  string
		hosts []Host
		want  Host
		ok    bool
	}{
		{"self-hosted by host name", "https://github.example.com/o/r.git", configured, ghe, true},
		{"host name and port pick among same-name hosts", "https://gitlab.example.com:9443/g/s/r", configured, gl9443, true},
		{"an SSH port is not the API port: first host of that name", "ssh://git@gitlab.example.com:2222/g/r.git", configured, gl8443, true},
		{"scp-like to a host configured with a port", "git@gitlab.example.com:g/r.git", configured, gl8443, true},
		{"default port and case ignored", "https://bb.example.com/scm/P/r.git", configured, bbs, true},
		{"github.com without configuration", "git@github.com:o/r.git", configured, Host{URL: "https://github.com", Type: GitHub}, true},
		{"ssh.github.com is github.com", "ssh://git@ssh.github.com:443/o/r.git", nil, Host{URL: "https://github.com", Type: GitHub}, true},
		{"gitlab.com without configuration", "https://gitlab.com/a/b/c", nil, Host{URL: "https://gitlab.com", Type: GitLab}, true},
		{"bitbucket.org without configuration", "git@bitbucket.org:ws/r.git", nil, Host{URL: "https://bitbucket.org", Type: BitbucketCloud}, true},
		{"a configured github.com wins over the default", "https://github.com/o/r", []Host{ghCom}, ghCom, true},
		{"IPv6 literal, SSH port", "ssh://git@[2001:db8::1]:2222/o/r.git", []Host{v6}, v6, true},
		{"unknown host", "https://git.unknown.example/o/r", configured, Host{}, false},
		{"a host name that only ends like a configured one", "https://evilgithub.example.com/o/r", configured, Host{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, err := ParseRepositoryURL(tc.repo)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := ResolveHost(repo, tc.hosts)
			if ok != tc.ok || got.URL != tc.want.URL || got.Type != tc.want.Type || got.Token != tc.want.Token {
				t.Errorf("ResolveHost(%s) = %+v, %v; want %+v, %v", repo.Host, got, ok, tc.want, tc.ok)
			}
		})
	}
}
