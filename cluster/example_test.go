package cluster_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/grmdp/grmdp/cluster"
)

func ExampleParse() {
	// A similarity matrix; cut average linkage at 2 clusters.
	const matrix = `,A,B,C,D
A,1,0.9,0.2,0.1
B,0.9,1,0.3,0.2
C,0.2,0.3,1,0.8
D,0.1,0.2,0.8,1
`
	a, err := cluster.Parse(strings.NewReader(matrix), "similarity.csv", cluster.Options{M: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range a.Clusters {
		fmt.Println(c.Name, c.Sites)
	}
	// Output:
	// c1 [A B]
	// c2 [C D]
}

func ExampleParse_threshold() {
	// An edge list; link sites whose similarity is at least 0.5.
	const edges = `site_a,site_b,similarity
1,2,0.7
2,3,0.6
10,11,0.9
3,10,0.1
`
	opts := cluster.Options{Threshold: 0.5, HasThreshold: true}
	a, err := cluster.Parse(strings.NewReader(edges), "edges.csv", opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range a.Clusters {
		fmt.Println(c.Name, c.Sites)
	}
	// Output:
	// c1 [1 2 3]
	// c2 [10 11]
}

func ExampleParse_error() {
	const matrix = `,A,B
A,1,0.5
B,0.4,1
`
	_, err := cluster.Parse(strings.NewReader(matrix), "similarity.csv", cluster.Options{M: 1})
	fmt.Println(err)
	// Output:
	// similarity.csv: line 3, column 2: matrix not symmetric: row "B" column "A" is 0.4 but row "A" column "B" is 0.5 (line 2, column 3)
}

func ExampleAssignment_Groups() {
	const assignment = `site,cluster
A,north
B,north
C,south
`
	a, err := cluster.Parse(strings.NewReader(assignment), "clusters.csv", cluster.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The data's sites, in the data's order; E is not in the file.
	groups, names, warnings, err := a.Groups([]string{"C", "E", "A", "B"}, true)
	if err != nil {
		fmt.Println(err)
		return
	}
	for g := range groups {
		fmt.Println(names[g], groups[g])
	}
	for _, w := range warnings {
		fmt.Println("warning:", w)
	}
	// Output:
	// south [0]
	// E [1]
	// north [2 3]
	// warning: cluster: site "E" is not in clusters.csv; it forms group "E" of its own
}

func ExampleAssignment_WriteJSON() {
	a, err := cluster.Parse(strings.NewReader(`{"b": "x", "a": "y"}`), "clusters.json", cluster.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := a.WriteJSON(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {
	//   "clusters": [
	//     {
	//       "name": "y",
	//       "sites": [
	//         "a"
	//       ]
	//     },
	//     {
	//       "name": "x",
	//       "sites": [
	//         "b"
	//       ]
	//     }
	//   ],
	//   "source": "clusters.json",
	//   "method": "assignment"
	// }
}
