package main

import "github.com/urfave/cli/v2"

func quickstartCommand() *cli.Command { return &cli.Command{Name: "quickstart", Hidden: true} }
func evalCommand() *cli.Command       { return &cli.Command{Name: "eval", Hidden: true} }
func experimentCommand() *cli.Command { return &cli.Command{Name: "experiment", Hidden: true} }
