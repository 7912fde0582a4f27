package sampledata

import (
	"bufio"
	"io"
	"math/rand/v2"
	"strconv"
	"time"
)

// ExportCategories are the incident categories of WriteIncidentsCSV.
var ExportCategories = []string{"Larceny Theft", "Assault", "Burglary", "Malicious Mischief", "Robbery",
	"Fraud", "Vandalism", "Motor Vehicle Theft", "Drug Offense", "Warrant", "Other Miscellaneous"}

// WriteIncidentsCSV writes n rows shaped like the portal's CSV export of
// the police incident reports, as a user downloads it: display-name
// headers, "2023/01/15 10:30:00 AM" timestamps, quoted cells with commas,
// "POINT (lon lat)" points. The rows are deterministic; the file is
// written as it goes, so any n fits in memory. Scale tests and the
// benchmarks load it with --data.
func WriteIncidentsCSV(w io.Writer, n int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteString("Incident Datetime,Incident ID,Incident Number,Incident Category,Incident Description,Resolution,Police District,Supervisor District,Latitude,Longitude,Point\n")
	districts := []string{"Mission", "Central", "Southern", "Northern", "Bayview", "Tenderloin", "Richmond", "Ingleside", "Taraval", "Park"}
	resolutions := []string{"Open or Active", "Cite or Arrest Adult", "Unfounded"}
	r := rand.New(rand.NewPCG(26, 1))
	base := time.Date(2018, 1, 1, 0, 0, 0, 0, time.UTC)
	var line []byte
	for i := range n {
		ts := base.Add(time.Duration(r.IntN(7*365*24*60)) * time.Minute)
		lat, lon := 37.708+r.Float64()*0.102, -122.510+r.Float64()*0.14
		line = ts.AppendFormat(line[:0], "2006/01/02 03:04:05 PM")
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(1_000_000+i), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(180_000_000+r.IntN(90_000_000)), 10)
		line = append(line, ',')
		line = append(line, ExportCategories[r.IntN(len(ExportCategories))]...)
		line = append(line, `,"Theft, from vehicle, >$950",`...)
		line = append(line, resolutions[r.IntN(len(resolutions))]...)
		line = append(line, ',')
		line = append(line, districts[r.IntN(len(districts))]...)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(1+r.IntN(11)), 10)
		line = append(line, ',')
		line = strconv.AppendFloat(line, lat, 'f', 6, 64)
		line = append(line, ',')
		line = strconv.AppendFloat(line, lon, 'f', 6, 64)
		line = append(line, ",POINT ("...)
		line = strconv.AppendFloat(line, lon, 'f', 6, 64)
		line = append(line, ' ')
		line = strconv.AppendFloat(line, lat, 'f', 6, 64)
		line = append(line, ")\n"...)
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}
