package main

import "github.com/urfave/cli/v2"

func experimentCommand() *cli.Command { return &cli.Command{Name: "experiment", Hidden: true} }
