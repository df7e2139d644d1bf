// compose-check loads docker-compose.yml with compose-go (the loader Docker Compose itself uses), so the file is
// validated against the Compose Specification without a Docker engine. It prints the services it found with
// what decides whether they can be scaled, as JSON. Usage: go run ./tools/compose-check docker-compose.yml
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/compose-spec/compose-go/v2/cli"
)

type serviceSummary struct {
	Image         string            `json:"image"`
	ContainerName string            `json:"containerName"`
	HostPorts     []string          `json:"hostPorts"`
	DependsOn     map[string]string `json:"dependsOn"`
	Environment   []string          `json:"environmentKeys"`
	Volumes       []string          `json:"volumes"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: compose-check <docker-compose.yml>")
		os.Exit(2)
	}
	file, err := filepath.Abs(os.Args[1])
	if err != nil {
		fail(err)
	}
	opts, err := cli.NewProjectOptions([]string{file}, cli.WithWorkingDirectory(filepath.Dir(file)), cli.WithOsEnv, cli.WithDotEnv)
	if err != nil {
		fail(err)
	}
	project, err := opts.LoadProject(context.Background())
	if err != nil {
		fail(err)
	}
	out := map[string]serviceSummary{}
	for name, s := range project.Services {
		sum := serviceSummary{Image: s.Image, ContainerName: s.ContainerName, DependsOn: map[string]string{}}
		for _, p := range s.Ports {
			if p.Published != "" {
				sum.HostPorts = append(sum.HostPorts, p.Published)
			}
		}
		for dep, d := range s.DependsOn {
			sum.DependsOn[dep] = d.Condition
		}
		for k := range s.Environment {
			sum.Environment = append(sum.Environment, k)
		}
		sort.Strings(sum.Environment)
		for _, v := range s.Volumes {
			sum.Volumes = append(sum.Volumes, v.Type+":"+v.Source+":"+v.Target)
		}
		out[name] = sum
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(map[string]any{"name": project.Name, "services": out}); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "compose-check:", err)
	os.Exit(1)
}
